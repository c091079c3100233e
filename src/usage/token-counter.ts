import { join, resolve } from 'node:path';
import { Worker } from 'node:worker_threads';
import { Injectable, type OnApplicationShutdown } from '@nestjs/common';
import { nextTurn } from '../common/http/json-shape';
import { AppLogger } from '../common/logging/logger';
import type { CountJob } from './token-counter.worker';
import { bytesEstimate, type PromptTexts } from './token-estimator';

/** The compiled worker (under ts-jest this file is .ts, so use the build's copy). */
function workerScript(): string {
  return __filename.endsWith('.ts')
    ? resolve(__dirname, '../../dist/usage/token-counter.worker.js')
    : join(__dirname, 'token-counter.worker.js');
}

/** A worker with nothing to count for this long is stopped (its tables are ~70 MB of the process's memory). */
const IDLE_STOP_MS = 60_000;

/**
 * The worker's young generation, in MB. V8 would size it as the main thread's (2 x 16 MB): a worker counting 40
 * prompts of 400 KB then added ~118 MB to the process's RSS, ~102 MB with 4 MB, in the same time per count
 * (docs/performance.md, memory under load). What it allocates while counting is short-lived.
 */
const WORKER_YOUNG_GENERATION_MB = 4;

/** Texts of this many characters or more are handed to the worker on a turn of their own (`inWorker`). */
const LONG_TEXTS_CHARS = 1024 * 1024;

/**
 * Exact token counts, always in a worker thread, started when a count is needed and stopped when idle.
 *
 * Counting is rare: the upstream reports exact usage for every answer that completes, so the gateway counts only
 * what no usage came back for (an abandoned stream, a server that never sends usage), reasoning a backend did
 * not count, and Messages `count_tokens` without an Anthropic backend. The o200k tables cost ~200 ms of CPU and
 * ~70 MB to load, and counting 100k tokens ~30 ms: neither belongs on the event loop or the main heap. The first
 * count after an idle spell waits for the worker to load (a few hundred ms, off the event loop). If the worker
 * cannot count (it crashed), the answer is one token per 3 bytes, so accounting never waits forever.
 */
@Injectable()
export class TokenCounter implements OnApplicationShutdown {
  /** How long the worker may sit idle before it is stopped (lowered by tests). */
  idleStopMs = IDLE_STOP_MS;
  private worker?: Worker;
  private idleTimer?: NodeJS.Timeout;
  private readonly pending = new Map<number, (total: number | undefined) => void>();
  private nextId = 1;

  constructor(private readonly logger: AppLogger) {}

  /** The worker's thread id while it runs (for tests and diagnostics). */
  get workerThreadId(): number | undefined {
    return this.worker?.threadId;
  }

  /** Workers started so far (for tests: a worker may already be stopped again by the time a test looks). */
  workersStarted = 0;

  /** The exact count of a prompt (its fixed format tokens plus its texts). */
  async prompt(prompt: PromptTexts): Promise<number> {
    return prompt.fixed + (await this.texts(prompt.texts));
  }

  /** The exact count of texts, each counted on its own. */
  async texts(texts: readonly string[]): Promise<number> {
    if (texts.every((text) => text === '')) return 0;
    return (await this.inWorker(texts)) ?? bytesEstimate(texts);
  }

  /**
   * Sets `completion_tokens_details.reasoning_tokens` from the reasoning text when the upstream sent reasoning
   * but did not count it. True when it had to count.
   */
  async fillReasoningTokens(
    usage: { completion_tokens_details?: Record<string, number> },
    reasoningText: readonly string[],
  ): Promise<boolean> {
    if (reasoningText.length === 0 || typeof usage.completion_tokens_details?.reasoning_tokens === 'number')
      return false;
    const reasoning = await this.texts([reasoningText.join('')]);
    usage.completion_tokens_details = { ...usage.completion_tokens_details, reasoning_tokens: reasoning };
    return true;
  }

  onApplicationShutdown(): Promise<number> | undefined {
    clearTimeout(this.idleTimer);
    return this.worker?.terminate();
  }

  private async inWorker(texts: readonly string[]): Promise<number | undefined> {
    // Handing texts to the worker copies them (structured clone), ~1 ms per MB: a long prompt's copy waits for a
    // turn of its own, so the counts of concurrent big prompts do not add up in one turn (json-shape.ts nextTurn).
    if (totalLength(texts) >= LONG_TEXTS_CHARS) await nextTurn();
    const worker = this.ensureWorker();
    clearTimeout(this.idleTimer);
    const id = this.nextId++;
    return new Promise((resolveCount) => {
      this.pending.set(id, resolveCount);
      worker.postMessage({ id, texts } satisfies CountJob);
    });
  }

  private ensureWorker(): Worker {
    if (this.worker) return this.worker;
    this.workersStarted++;
    const worker = new Worker(workerScript(), {
      resourceLimits: { maxYoungGenerationSizeMb: WORKER_YOUNG_GENERATION_MB },
    });
    worker.unref(); // never keeps the process alive on its own
    worker.on('message', (message: { id: number; total: number }) => {
      this.pending.get(message.id)?.(message.total);
      this.pending.delete(message.id);
      if (this.pending.size === 0) this.stopWhenIdle(worker);
    });
    const fail = (reason: string) => {
      if (this.worker !== worker) return;
      this.worker = undefined;
      if (this.pending.size)
        this.logger.pino.warn(
          { reason, waiting: this.pending.size },
          'token counter worker stopped; estimating instead',
        );
      for (const settle of this.pending.values()) settle(undefined);
      this.pending.clear();
    };
    worker.on('error', (error) => fail(error.message));
    worker.on('exit', (code) => fail(`exit ${code}`));
    this.worker = worker;
    return worker;
  }

  private stopWhenIdle(worker: Worker): void {
    clearTimeout(this.idleTimer);
    this.idleTimer = setTimeout(() => {
      if (this.worker !== worker || this.pending.size) return;
      this.worker = undefined; // before terminate: its exit is not a failure
      void worker.terminate();
    }, this.idleStopMs);
    this.idleTimer.unref();
  }
}

function totalLength(texts: readonly string[]): number {
  let length = 0;
  for (const text of texts) length += text.length;
  return length;
}
