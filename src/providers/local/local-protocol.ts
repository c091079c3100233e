/** Messages between the gateway and its local-model worker process (over the IPC channel). */

/**
 * What `tool_choice: "auto"` (the default when tools are sent) means on a local backend (`local.autoToolChoice`):
 * - `model`: the model decides, by writing its chat template's call syntax or not.
 * - `callFirst`: for a model too small to decide (the default SmolLM2-135M never calls a tool on its own, see
 *   docs/backends.md): when the latest turn is the user's (system messages after it aside) and no tool result is in
 *   the conversation yet, the answer is a call (the model still picks the tool and writes its arguments); after
 *   that, the answer is text. One forced call per conversation: a model that cannot decide whether to call cannot
 *   decide it after a result either, and a later user turn may be a client's continuation, not a new request.
 */
export const AUTO_TOOL_CHOICES = ['model', 'callFirst'] as const;
export type AutoToolChoice = (typeof AUTO_TOOL_CHOICES)[number];

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

/**
 * The conversation in node-llama-cpp's chat-history shape (plain JSON, so it crosses the IPC channel as is). The
 * last item is the model response being generated: empty for a new answer, or the model's earlier tool calls
 * with their results when the answer continues after them.
 */
export type HistoryItem =
  | { type: 'system'; text: string }
  | { type: 'user'; text: string }
  | { type: 'model'; response: Array<string | FunctionCallItem> };

/** One tool call the model made, with the result the client sent back for it (node-llama-cpp's ChatModelFunctionCall). */
export interface FunctionCallItem {
  type: 'functionCall';
  name: string;
  params: unknown;
  result: unknown;
  /** The first call of an assistant message (node-llama-cpp renders parallel calls in chunks). */
  startsNewChunk?: boolean;
}

/** The tools a request offers, as node-llama-cpp's `functions` (params: a JSON schema its grammar can enforce). */
export type LocalFunctions = Record<string, { description?: string; params: object }>;

export interface GenerateRequest {
  type: 'generate';
  id: number;
  history: HistoryItem[];
  /** Tools the model may call (absent: none, or `tool_choice: "none"`). */
  functions?: LocalFunctions;
  /** The answer must be a tool call (`tool_choice: "required"` or a named function). */
  forceCall?: boolean;
  /** The answer is text: the tools stay in the prompt (as on the turn before) but a call is not taken (callFirst, after results). */
  answerOnly?: boolean;
  /** Calls in one answer at most (`parallel_tool_calls: false`: 1); unset: as many as the chat template allows. */
  maxParallelCalls?: number;
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
  | {
      type: 'ready';
      modelName: string;
      thoughts: boolean;
      threads: number;
      pinnedCpus?: number[];
      pinFailure?: string;
      dimensions?: number;
    }
  | { type: 'failed'; message: string }
  | { type: 'text'; id: number; text: string }
  | { type: 'thought'; id: number; text: string }
  /** The model started tool call `index` (0, 1, ... within the answer); its arguments follow as `callArguments`. */
  | { type: 'callStart'; id: number; index: number; name: string }
  /** More of call `index`'s arguments, as generated (the JSON text, grammar-constrained to the tool's schema). */
  | { type: 'callArguments'; id: number; index: number; text: string }
  /**
   * completionTokens includes reasoningTokens (the thought section's), as in OpenAI's usage; cachedTokens: the start
   * of the prompt the sequence held from an earlier request, not evaluated again (counted for long prompts only).
   */
  | {
      type: 'done';
      id: number;
      finishReason: 'stop' | 'length' | 'tool_calls';
      promptTokens: number;
      cachedTokens: number;
      completionTokens: number;
      reasoningTokens: number;
    }
  /** The answer to an abort: what was spent before it stopped (exact), so an abandoned request is accounted. */
  | { type: 'aborted'; id: number; promptTokens: number; completionTokens: number; reasoningTokens: number }
  /** One L2-normalised vector per input, in order, and the tokens the inputs were (the model's own tokenizer). */
  | { type: 'embedded'; id: number; vectors: number[][]; promptTokens: number }
  /** `code` marks a failure that is the request's own (the prompt does not fit the context): a 400, not a 502. */
  | { type: 'error'; id: number; message: string; code?: 'context_length_exceeded' };
