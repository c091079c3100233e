/** Messages between the gateway and its local-model worker process (over the IPC channel). */

export interface WorkerInit {
  type: 'init';
  modelPath: string;
  runtimeDir: string;
  parallel: number;
  contextSize: number;
  /** Resolved by the gateway (cpu-placement.ts), never 0 here. */
  threads: number;
  /** CPUs the worker pins itself to before it loads anything (so every thread it starts inherits them). */
  cpus?: number[];
  /** Completion tokens when the client sets no limit (and never more than the context has left). */
  defaultMaxTokens: number;
  /** An embedding model: one embedding context, `embed` requests only. */
  embedding: boolean;
}

export interface EmbedRequest {
  type: 'embed';
  id: number;
  /** Texts, or token arrays (embedded as given). */
  inputs: Array<string | number[]>;
}

export interface GenerateRequest {
  type: 'generate';
  id: number;
  messages: Array<{ role: string; content: string }>;
  /** The client's limit, if it set one (the worker caps it at what the context has left). */
  maxTokens?: number;
  temperature?: number;
  topP?: number;
  seed?: number;
  presencePenalty?: number;
  frequencyPenalty?: number;
  stop?: string[];
  /** Tokens the model may spend in its thought section (0: none); only for models that have one. */
  thoughtBudget: number;
}

export interface AbortRequest {
  type: 'abort';
  id: number;
}

export type ToWorker = WorkerInit | GenerateRequest | EmbedRequest | AbortRequest;

export type FromWorker =
  /** `thoughts`: the GGUF's chat template has a thought section (e.g. <think>...</think>). */
  | { type: 'ready'; modelName: string; thoughts: boolean; threads: number; pinnedCpus?: number[]; pinFailure?: string; dimensions?: number }
  | { type: 'failed'; message: string }
  | { type: 'text'; id: number; text: string }
  | { type: 'thought'; id: number; text: string }
  /** completionTokens includes reasoningTokens (the thought section's), as in OpenAI's usage. */
  | { type: 'done'; id: number; finishReason: 'stop' | 'length'; promptTokens: number; completionTokens: number; reasoningTokens: number }
  /** The answer to an abort: what was spent before it stopped (exact), so an abandoned request is accounted. */
  | { type: 'aborted'; id: number; promptTokens: number; completionTokens: number; reasoningTokens: number }
  /** One L2-normalised vector per input, in order, and the tokens the inputs were (the model's own tokenizer). */
  | { type: 'embedded'; id: number; vectors: number[][]; promptTokens: number }
  /** `code` marks a failure that is the request's own (the prompt does not fit the context): a 400, not a 502. */
  | { type: 'error'; id: number; message: string; code?: 'context_length_exceeded' };
