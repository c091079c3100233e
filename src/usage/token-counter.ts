import { join, resolve } from 'node:path';
import { Worker } from 'node:worker_threads';
import { Injectable, type OnApplicationShutdown } from '@nestjs/common';
import { AppLogger } from '../common/logging/logger';
import type { CountJob } from './token-counter.worker';
import { BYTES_PER_RESERVED_TOKEN, countPrompt, EXACT_UP_TO_BYTES, type PromptTexts } from './token-estimator';

/** The compiled worker (under ts-jest this file is .ts, so use the build's copy). */
function workerScript(): string {
  return __filename.endsWith('.ts') ? resolve(__dirname, '../../dist/usage/token-counter.worker.js') : join(__dirname, 'token-counter.worker.js');
}

/**
 * Exact token counts of texts that may be large (a 100k-token prompt, a long relayed answer), in a worker
 * thread: counting 100k tokens takes ~30 ms of CPU, which on the event loop would stall every other request on
 * the replica. Small texts are counted in place (a round trip to the worker costs more than they do). If the
 * worker cannot count (it crashed), the answer is the reservation's estimate, so accounting never waits forever.
 */
@Injectable()
export class TokenCounter implements OnApplicationShutdown {
  private worker?: Worker;
  private readonly pending = new Map<number, (total: number | undefined) => void>();
  private nextId = 1;

  constructor(private readonly logger: AppLogger) {}

  /** The exact count of a prompt (its fixed format tokens plus its texts). */
  async prompt(prompt: PromptTexts): Promise<number> {
    return prompt.fixed + (await this.texts(prompt.texts));
  }

  /** The exact count of texts, each counted on its own. */
  async texts(texts: string[]): Promise<number> {
    let bytes = 0;
    for (const text of texts) bytes += text.length;
    if (bytes <= EXACT_UP_TO_BYTES) return countPrompt({ fixed: 0, texts });
    const counted = await this.inWorker(texts);
    return counted ?? Math.ceil(texts.reduce((sum, text) => sum + Buffer.byteLength(text, 'utf8'), 0) / BYTES_PER_RESERVED_TOKEN);
  }

  onApplicationShutdown(): Promise<number> | undefined {
    return this.worker?.terminate();
  }

  private inWorker(texts: string[]): Promise<number | undefined> {
    const worker = this.ensureWorker();
    const id = this.nextId++;
    return new Promise((resolveCount) => {
      this.pending.set(id, resolveCount);
      worker.postMessage({ id, texts } satisfies CountJob);
    });
  }

  private ensureWorker(): Worker {
    if (this.worker) return this.worker;
    const worker = new Worker(workerScript());
    worker.unref(); // never keeps the process alive on its own
    worker.on('message', (message: { id: number; total: number }) => {
      this.pending.get(message.id)?.(message.total);
      this.pending.delete(message.id);
    });
    const fail = (reason: string) => {
      if (this.worker !== worker) return;
      this.worker = undefined;
      if (this.pending.size) this.logger.pino.warn({ reason, waiting: this.pending.size }, 'token counter worker stopped; estimating instead');
      for (const settle of this.pending.values()) settle(undefined);
      this.pending.clear();
    };
    worker.on('error', (error) => fail(error.message));
    worker.on('exit', (code) => fail(`exit ${code}`));
    this.worker = worker;
    return worker;
  }
}
