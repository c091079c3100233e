import { fork, type ChildProcess } from 'node:child_process';
import { join, resolve } from 'node:path';
import type { LocalBackendConfig } from './local.config';
import { GatewayException } from '../../core/errors/gateway.exception';
import type { ChatRequest } from '../../core/chat-request';
import type { UpstreamCall } from '../provider-adapter';
import type { BackendLog } from '../provider-family';
import { AbortedWithUsage, type BackendClient, type UpstreamResponse } from '../upstream-client';
import { placementFor } from './cpu-placement';
import { LocalAnswer } from './local-answer';
import { historyOf } from './local-history';
import type { FromWorker, GenerateRequest, ToWorker } from './local-protocol';
import { LocalReply, usageOf } from './local-reply';
import { toolUseOf } from './local-tools';

interface Pending {
  body: LocalAnswer;
  /** Set once the client has gone: the body fails when the worker reports what was spent (or after a bound). */
  abandoned?: NodeJS.Timeout;
  /** A chat completion being generated (absent for an embeddings request). */
  reply?: LocalReply;
  /** An embeddings request (answered whole, with `embedded`): the model it names. */
  embeddingModel?: string;
}

/**
 * How long an abandoned request waits for the worker's report of what it spent before it is let go (and accounted
 * with an estimate). Only a worker that is alive and never answers reaches it (one that exits settles its requests
 * at once), so it is long: the report follows the token being evaluated when the abort arrives, and on a loaded
 * 2-core machine that token alone can take seconds (2 s was too short there, and records became estimates).
 */
const ABORT_REPORT_MS = 30_000;

/** The compiled worker (under ts-jest this file is .ts, so use the build's copy). */
function workerScript(): string {
  return __filename.endsWith('.ts')
    ? resolve(__dirname, '../../../dist/providers/local/local-worker.js')
    : join(__dirname, 'local-worker.js');
}

/**
 * A `local` backend: requests go to a worker process running node-llama-cpp and come back as a LocalAnswer: chat
 * chunks as tokens arrive (stream steps, no text in between), or the whole answer as an object. At most `parallel`
 * generate at once, `queueSize` more wait; beyond that 429. A crashed worker fails its
 * requests with 503 and is restarted.
 */
export class LocalModelClient implements BackendClient {
  readonly cancelsAtNoCost = true;
  private worker?: ChildProcess;
  private ready?: Promise<void>;
  /** The worker has said ready: requests go out synchronously, with no turn of the event loop first. */
  private isReady = false;
  private readonly pending = new Map<number, Pending>();
  /** Requests the client abandoned, waiting for the worker's report of what they spent; they hold no capacity. */
  private readonly abandoned = new Map<number, Pending>();
  private nextId = 1;
  private restarts = 0;
  private closed = false;
  private lastFailure = 'starting';
  /** Set when the model could not even load (runtime or file missing): restarting cannot help. */
  private cannotLoad = false;
  /** Whether the loaded model's chat template has a thought section (known once the worker is ready). */
  private thoughts = false;
  /** An embedding model's vector length (known once the worker is ready). */
  private dimensions?: number;

  constructor(
    private readonly backendId: string,
    private readonly config: LocalBackendConfig,
    private readonly log: BackendLog = () => undefined,
  ) {
    this.start();
  }

  get workerPid(): number | undefined {
    return this.worker?.pid;
  }

  async send(call: UpstreamCall, signal: AbortSignal): Promise<UpstreamResponse> {
    if (this.pending.size >= this.config.parallel + this.config.queueSize) {
      throw new GatewayException(
        'rate_limit_exceeded',
        `The local model "${this.backendId}" is busy (${this.pending.size} requests); retry shortly.`,
        {
          headers: { 'retry-after': '1' },
          atCapacity: true,
        },
      );
    }
    if (!this.isReady) await this.whenReady();
    const request = JSON.parse(call.body.toString()) as Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any
    if (call.path === '/embeddings')
      return this.sendEmbedding(
        request as { model: string; input: string | string[] | number[] | number[][]; dimensions?: number },
        signal,
      );
    const thoughtBudget = this.thoughtBudget(request.thinking);
    // The adapter checked these already (a 400 before any admission); mapped here from the body the worker runs.
    const history = historyOf(request.messages);
    const tools = toolUseOf(request as ChatRequest, this.config.autoToolChoice);
    const id = this.nextId++;
    const body = new LocalAnswer();
    const pending: Pending = {
      body,
      reply: new LocalReply(body, request.stream === true, String(request.model)),
    };
    this.pending.set(id, pending);
    const message: GenerateRequest = {
      type: 'generate',
      id,
      history,
      ...(tools.functions
        ? {
            functions: tools.functions,
            forceCall: tools.forceCall,
            answerOnly: tools.answerOnly,
            maxParallelCalls: tools.maxParallelCalls,
          }
        : {}),
      maxTokens: request.max_completion_tokens ?? request.max_tokens ?? undefined,
      temperature: request.temperature ?? undefined,
      topP: request.top_p ?? undefined,
      seed: typeof request.seed === 'number' ? request.seed : undefined,
      presencePenalty: typeof request.presence_penalty === 'number' ? request.presence_penalty : undefined,
      frequencyPenalty: typeof request.frequency_penalty === 'number' ? request.frequency_penalty : undefined,
      stop:
        request.stop === undefined || request.stop === null
          ? undefined
          : Array.isArray(request.stop)
            ? request.stop
            : [request.stop],
      thoughtBudget,
    };
    this.post(message);
    // Client gone: cancel generation in the worker at once; the body fails once the worker says what was spent
    // (so the request is accounted exactly), or after ABORT_REPORT_MS if it does not answer.
    signal.addEventListener('abort', () => {
      if (!this.pending.delete(id)) return;
      this.abandoned.set(id, pending);
      this.post({ type: 'abort', id });
      pending.abandoned = setTimeout(() => this.settleAbort(id, undefined), ABORT_REPORT_MS);
    });
    return { status: 200, headers: {}, body };
  }

  /** POST /v1/embeddings on an embedding model: every input embedded by the worker, answered as OpenAI's list. */
  private sendEmbedding(
    request: { model: string; input: string | string[] | number[] | number[][]; dimensions?: number },
    signal: AbortSignal,
  ): UpstreamResponse {
    if (
      typeof request.dimensions === 'number' &&
      this.dimensions !== undefined &&
      request.dimensions !== this.dimensions
    ) {
      throw new GatewayException(
        'invalid_request',
        `The model \`${request.model}\` runs locally and makes ${this.dimensions}-dimensional vectors only: 'dimensions' cannot change that.`,
        {
          param: 'dimensions',
          wireCode: 'unsupported_parameter',
        },
      );
    }
    const { input } = request;
    const inputs =
      typeof input === 'string'
        ? [input]
        : typeof input[0] === 'number'
          ? [input as number[]]
          : (input as Array<string | number[]>);
    const id = this.nextId++;
    const body = new LocalAnswer();
    this.pending.set(id, { body, embeddingModel: request.model });
    this.post({ type: 'embed', id, inputs });
    // Nothing to cancel in the worker (an embedding takes milliseconds): the client just stops waiting.
    signal.addEventListener('abort', () => {
      if (this.pending.delete(id)) body.fail(new AbortedWithUsage(undefined));
    });
    return { status: 200, headers: {}, body };
  }

  /**
   * `thinking: {type: "enabled", budget_tokens}` -> the thought budget the worker enforces; a 400 when the
   * model's template has no thought section. Without it (or `disabled`), a thinking model answers at once.
   */
  private thoughtBudget(thinking: { type?: string; budget_tokens?: number } | undefined): number {
    if (thinking?.type !== 'enabled') return 0;
    if (!this.thoughts) {
      throw new GatewayException(
        'invalid_request',
        `The model's chat template has no thought section, so it cannot use 'thinking'.`,
        {
          param: 'thinking',
          wireCode: null,
        },
      );
    }
    return thinking.budget_tokens ?? 0;
  }

  transportError(error: unknown): unknown {
    return error;
  }

  inFlight(): number {
    return this.pending.size;
  }

  /** A model that cannot load (file or runtime missing) is never restarted: the backend is unusable until fixed. */
  unusable(): string | undefined {
    return this.cannotLoad ? `the local model cannot load: ${this.lastFailure}` : undefined;
  }

  /** Known once the worker has loaded the model: whether its chat template has a thought section. */
  canThink(): boolean | undefined {
    return this.isReady ? this.thoughts : undefined;
  }

  async close(): Promise<void> {
    this.closed = true;
    this.worker?.kill('SIGTERM');
  }

  private start(): void {
    const worker = fork(workerScript(), [], {
      stdio: ['ignore', 'ignore', 'pipe', 'ipc'],
      serialization: 'advanced',
    });
    this.worker = worker;
    worker.stderr?.on('data', () => undefined); // llama.cpp chatter; failures arrive as messages
    this.ready = new Promise<void>((resolveReady, reject) => {
      worker.on('message', (message: FromWorker) => {
        if (message.type === 'ready') {
          this.restarts = 0;
          this.isReady = true;
          this.thoughts = message.thoughts;
          this.dimensions = message.dimensions;
          const pinning = message.pinnedCpus
            ? `pinned to CPU ${message.pinnedCpus.join(',')}`
            : message.pinFailure
              ? `not pinned: ${message.pinFailure}`
              : 'not pinned';
          this.log(
            `local model ready: ${message.modelName} (${message.threads} inference thread(s), ${pinning})`,
          );
          resolveReady();
        } else if (message.type === 'failed') {
          this.cannotLoad = true;
          this.lastFailure = `${message.message} (run "npm run local:install" and "npm run model:fetch", or fix local.modelPath)`;
          reject(new Error(message.message));
        } else this.onMessage(message);
      });
      worker.once('exit', (code, signal) => {
        this.isReady = false;
        if (!this.cannotLoad) this.lastFailure = `the worker exited (${signal ?? code})`;
        reject(new Error(this.lastFailure));
        this.onExit();
      });
    });
    this.ready.catch(() => undefined);
    this.post({ type: 'init', ...this.config, ...placementFor(this.config) });
  }

  private async whenReady(): Promise<void> {
    try {
      await this.ready;
    } catch {
      // A model that cannot load (its file or runtime missing) is a configuration fault: the 403 no client retries
      // (as the router gives once it knows, model-router.service.ts); a crashed worker is restarted, so 503.
      throw this.cannotLoad
        ? new GatewayException(
            'model_unavailable',
            `The local model "${this.backendId}" is not available: ${this.lastFailure}.`,
            { param: 'model' },
          )
        : new GatewayException(
            'upstream_unavailable',
            `The local model "${this.backendId}" is not available: ${this.lastFailure}.`,
          );
    }
  }

  private onExit(): void {
    for (const [id, pending] of this.pending) {
      this.pending.delete(id);
      pending.body.fail(
        new GatewayException(
          'upstream_unavailable',
          `The local model "${this.backendId}" worker crashed; it is being restarted.`,
        ),
      );
    }
    for (const id of [...this.abandoned.keys()]) this.settleAbort(id, undefined);
    if (this.closed) return;
    if (this.cannotLoad) {
      this.log(`local model "${this.backendId}" unavailable: ${this.lastFailure}`, 'error');
      return;
    }
    // Restart with backoff (0.5 s doubling to 30 s) so a model that cannot load does not spin.
    const delay = Math.min(30_000, 500 * 2 ** this.restarts++);
    this.log(`local model worker exited (${this.lastFailure}); restarting in ${delay} ms`, 'warn');
    setTimeout(() => this.closed || this.start(), delay).unref();
  }

  private onMessage(message: FromWorker): void {
    if (!('id' in message)) return;
    if (message.type === 'aborted') {
      this.settleAbort(message.id, {
        prompt_tokens: message.promptTokens,
        completion_tokens: message.completionTokens,
        reasoning_tokens: message.reasoningTokens,
      });
      return;
    }
    // The worker ended a request before the client's abort reached it: no `aborted` report will follow (the worker no
    // longer runs it), and its answer says what was spent.
    if (this.abandoned.has(message.id) && (message.type === 'done' || message.type === 'error')) {
      this.settleAbort(
        message.id,
        message.type === 'done'
          ? {
              prompt_tokens: message.promptTokens,
              completion_tokens: message.completionTokens,
              reasoning_tokens: message.reasoningTokens,
            }
          : undefined,
      );
      return;
    }
    const pending = this.pending.get(message.id);
    if (!pending) return;
    const reply = pending.reply;
    if (message.type === 'text') return reply?.onText(message.text);
    if (message.type === 'thought') return reply?.onThought(message.text);
    if (message.type === 'callStart') return reply?.onCallStart(message.index, message.name);
    if (message.type === 'callArguments') return reply?.onCallArguments(message.index, message.text);
    this.pending.delete(message.id);
    if (message.type === 'embedded') {
      const data = message.vectors.map((embedding, index) => ({ object: 'embedding', index, embedding }));
      pending.body.complete({
        object: 'list',
        data,
        model: pending.embeddingModel,
        usage: { prompt_tokens: message.promptTokens, total_tokens: message.promptTokens },
      });
      return;
    }
    if (message.type === 'error') {
      pending.body.fail(
        message.code === 'context_length_exceeded'
          ? new GatewayException('invalid_request', message.message, {
              param: reply ? 'messages' : 'input',
              wireCode: 'context_length_exceeded',
            })
          : new GatewayException(
              'upstream_error',
              `The local model "${this.backendId}" failed: ${message.message}`,
            ),
      );
      return;
    }
    reply?.finish(
      message.finishReason,
      usageOf(message.promptTokens, message.completionTokens, message.reasoningTokens, message.cachedTokens),
    );
  }

  /** Ends an abandoned request's body with an abort that carries what the worker spent on it (when it said). */
  private settleAbort(
    id: number,
    spent: { prompt_tokens: number; completion_tokens: number; reasoning_tokens: number } | undefined,
  ): void {
    const pending = this.abandoned.get(id);
    if (!pending) return;
    this.abandoned.delete(id);
    clearTimeout(pending.abandoned);
    const usage = spent && usageOf(spent.prompt_tokens, spent.completion_tokens, spent.reasoning_tokens);
    pending.body.fail(new AbortedWithUsage(usage));
  }

  private post(message: ToWorker): void {
    if (this.worker?.connected) this.worker.send(message);
  }
}
