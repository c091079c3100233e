/**
 * The local-model worker: a child process that owns node-llama-cpp, so a long prompt or a
 * native crash never stalls or kills the gateway. It loads the model once, keeps one context
 * sequence per parallel request, and streams text back over IPC as it is generated.
 *
 * node-llama-cpp is loaded from the runtime folder (`npm run local:install`) with
 * `build: "never"` and `gpu: false`: it never downloads, compiles or probes GPUs at run time.
 */
import { join, resolve } from 'node:path';
import { pinThisProcess } from './cpu-placement';
import { historyChars } from './local-history';
import type { EmbedRequest, FromWorker, GenerateRequest, ToWorker, WorkerInit } from './local-protocol';
import { completionLimit, samplingFor, type GgufSampling } from './sampling';

/* eslint-disable @typescript-eslint/no-explicit-any -- node-llama-cpp is ESM, loaded at run time, and untyped here */
const importEsm = new Function('specifier', 'return import(specifier)') as (
  specifier: string,
) => Promise<any>;

const send = (message: FromWorker) => process.send?.(message);
const running = new Map<number, AbortController>();
interface Slot {
  sequence: any;
  chat: any;
  /** The same sequence with the call-forcing wrapper (`tool_choice: "required"` or a named function). */
  callingChat: any;
  /** The same sequence with the wrapper that takes no call (callFirst after tool results). */
  answeringChat: any;
}
let runtime:
  | {
      module: any;
      model: any;
      context: any;
      chatWrapper: any;
      free: Slot[];
      waiting: Array<(slot: Slot) => void>;
      defaultMaxTokens: number;
      ggufSampling?: GgufSampling;
    }
  | undefined;

/**
 * Template text a chat adds around the messages, in characters, at most (role markers, the system prompt some
 * templates insert). A prompt whose characters plus this plus the completion limit fit the context cannot
 * overflow it (a token is at least one character), so it need not be counted before generating.
 */
const TEMPLATE_SLACK_CHARS = 512;

async function init(config: WorkerInit): Promise<void> {
  // First, so the threads llama.cpp and Node start later inherit the pinning.
  const pinFailure = config.cpus ? pinThisProcess(config.cpus) : undefined;
  try {
    const entry = join(resolve(config.runtimeDir), 'node_modules/node-llama-cpp/dist/index.js');
    const module = await importEsm(entry);
    const llama = await module.getLlama({
      build: 'never',
      gpu: false,
      logLevel: 'error',
      progressLogs: false,
    });
    const model = await llama.loadModel({ modelPath: resolve(config.modelPath) });
    if (config.embedding) return await initEmbedding(model, config, pinFailure);
    const context = await model.createContext({
      sequences: config.parallel,
      contextSize: config.contextSize,
      threads: config.threads,
    });
    // One chat wrapper (resolving the template takes ~300 ms) and its LlamaChats per sequence, made once.
    const chatWrapper = chatWrapperFor(module, model);
    const callingWrapper = callForcingWrapper(module, chatWrapper);
    const answeringWrapper = callIgnoringWrapper(chatWrapper);
    const free = Array.from({ length: config.parallel }, () => {
      const sequence = context.getSequence();
      return {
        sequence,
        chat: new module.LlamaChat({ contextSequence: sequence, chatWrapper }),
        callingChat: new module.LlamaChat({ contextSequence: sequence, chatWrapper: callingWrapper }),
        answeringChat: new module.LlamaChat({ contextSequence: sequence, chatWrapper: answeringWrapper }),
      };
    });
    const ggufSampling = model.fileInfo?.metadata?.general?.sampling as GgufSampling | undefined;
    runtime = {
      module,
      model,
      context,
      chatWrapper,
      free,
      waiting: [],
      defaultMaxTokens: config.defaultMaxTokens,
      ggufSampling,
    };
    const thoughts = chatWrapper.settings?.segments?.thought != null;
    const pinnedCpus = config.cpus && !pinFailure ? config.cpus : undefined;
    send({
      type: 'ready',
      modelName: String(model.fileInfo?.metadata?.general?.name ?? config.modelPath),
      thoughts,
      threads: config.threads,
      pinnedCpus,
      pinFailure,
    });
  } catch (error) {
    send({ type: 'failed', message: error instanceof Error ? error.message : String(error) });
    process.exit(1);
  }
}

let embedder: { model: any; context: any; contextSize: number; queue: Promise<void> } | undefined;

/** An embedding model: one embedding context (its context is the model's own, e.g. 512 tokens for BERT). */
async function initEmbedding(model: any, config: WorkerInit, pinFailure: string | undefined): Promise<void> {
  const contextSize = Math.min(config.contextSize, Number(model.trainContextSize ?? config.contextSize));
  const context = await model.createEmbeddingContext({ contextSize, threads: config.threads });
  embedder = { model, context, contextSize, queue: Promise.resolve() };
  const dimensions = Number(model.embeddingVectorSize ?? 0) || undefined;
  const pinnedCpus = config.cpus && !pinFailure ? config.cpus : undefined;
  send({
    type: 'ready',
    modelName: String(model.fileInfo?.metadata?.general?.name ?? config.modelPath),
    thoughts: false,
    threads: config.threads,
    pinnedCpus,
    pinFailure,
    dimensions,
  });
}

/**
 * Embeds each input in turn (one context; requests queue behind each other). Vectors are L2-normalised, as
 * sentence-transformers models end with a Normalize layer that a GGUF does not carry; tokens are the model's own.
 */
function embed(request: EmbedRequest): void {
  const run = async () => {
    const { model, context, contextSize } = embedder!;
    const vectors: number[][] = [];
    let promptTokens = 0;
    for (const input of request.inputs) {
      const tokens: number[] = typeof input === 'string' ? model.tokenize(input) : input;
      promptTokens += tokens.length;
      if (tokens.length + 2 > contextSize) {
        send({
          type: 'error',
          id: request.id,
          code: 'context_length_exceeded',
          message: `An input is ${tokens.length} tokens; this embedding model takes at most ${contextSize - 2}.`,
        });
        return;
      }
      const embedding = await context.getEmbeddingFor(typeof input === 'string' ? input : tokens);
      const vector = Array.from(embedding.vector as ArrayLike<number>);
      const norm = Math.hypot(...vector) || 1;
      vectors.push(vector.map((value) => value / norm));
    }
    send({ type: 'embedded', id: request.id, vectors, promptTokens });
  };
  embedder!.queue = embedder!.queue.then(run).catch((error: unknown) => {
    send({ type: 'error', id: request.id, message: error instanceof Error ? error.message : String(error) });
  });
}

/**
 * The chat wrapper node-llama-cpp picks for the GGUF, unless the GGUF's own Jinja template has a thought section
 * that the picked wrapper lacks: a template that is ChatML plus `<think>` (QwQ-style) matches the plain ChatML
 * wrapper, which would drop the thoughts. Then the template itself is used, as written.
 */
function chatWrapperFor(module: any, model: any): any {
  const resolved = module.resolveChatWrapper({
    type: 'auto',
    fileInfo: model.fileInfo,
    tokenizer: model.tokenizer,
    bosString: model.tokens?.bosString,
    filename: model.filename,
  });
  if (resolved?.settings?.segments?.thought) return resolved;
  const template = model.fileInfo?.metadata?.tokenizer?.chat_template;
  if (typeof template === 'string') {
    try {
      const jinja = new module.JinjaTemplateChatWrapper({ template, tokenizer: model.tokenizer });
      if (jinja.settings?.segments?.thought) return jinja;
    } catch {
      // A template node-llama-cpp cannot render: keep the wrapper it picked.
    }
  }
  return resolved ?? 'auto';
}

/**
 * Prompts at least this long (in characters) pick, among free sequences, the one already holding the longest start
 * of them; shorter ones take the last freed sequence without tokenizing first (the first token would wait for it).
 */
const PREFIX_MATCH_MIN_CHARS = 4096;

/**
 * A free sequence, or undefined if the request is abandoned while it waits for one. A sequence keeps the tokens of
 * the last request it ran, and node-llama-cpp evaluates only what differs from them: an agent's next turn resends
 * the conversation so far, so its long prompt is mostly there already. The last freed sequence is taken (the same
 * client's previous turn, most often), or, for a long prompt when several are free, the one sharing most of it.
 */
function acquire(
  signal: AbortSignal,
  history: GenerateRequest['history'],
  promptOf: () => unknown[],
): Promise<Slot | undefined> {
  const free = runtime!.free;
  if (free.length > 1 && historyChars(history) >= PREFIX_MATCH_MIN_CHARS) {
    const tokens = promptOf();
    const shared = free.map(
      (slot) => slot.sequence.compareContextTokens(tokens).firstDifferentIndex as number,
    );
    return Promise.resolve(free.splice(shared.indexOf(Math.max(...shared)), 1)[0]);
  }
  const slot = free.pop();
  if (slot) return Promise.resolve(slot);
  return new Promise((resolveSlot) => {
    const waiter = (freed: Slot) => {
      signal.removeEventListener('abort', leave);
      resolveSlot(freed);
    };
    const leave = () => {
      runtime!.waiting.splice(runtime!.waiting.indexOf(waiter), 1);
      resolveSlot(undefined);
    };
    signal.addEventListener('abort', leave, { once: true });
    runtime!.waiting.push(waiter);
  });
}

function release(slot: Slot): void {
  const next = runtime!.waiting.shift();
  if (next) next(slot);
  else runtime!.free.push(slot);
}

/**
 * The chat wrapper, with every answer opened as a function call: node-llama-cpp puts the wrapper's call prefix
 * into the context and enters function-calling mode, where its grammar lets the model write only one of the
 * offered function names and then arguments that match that function's schema. (The same mechanism its own
 * wrappers use for models whose template opens a call; the wrapper renders everything else as before.)
 */
function callForcingWrapper(module: any, wrapper: any): any {
  const forcing = Object.create(wrapper);
  forcing.generateContextState = function (options: unknown) {
    const state = wrapper.generateContextState.call(this, options);
    // Wrappers whose answers may start in function-calling mode (Functionary): start there, with no way out.
    if (state.functionCall)
      return { ...state, functionCall: { initiallyEngaged: true, disengageInitiallyEngaged: [] } };
    return {
      ...state,
      prefixTriggers: undefined,
      noPrefixTrigger: {
        type: 'functionCall',
        inject: module.LlamaText(wrapper.settings.functions.call.prefix),
      },
    };
  };
  return forcing;
}

/**
 * The chat wrapper with the tools still documented in the prompt (so it is the prompt of the turn before, and the
 * sequence's tokens are reused) but no call taken: node-llama-cpp does not look for the call syntax, so what the
 * model writes is its answer.
 */
function callIgnoringWrapper(wrapper: any): any {
  const ignoring = Object.create(wrapper);
  ignoring.generateContextState = function (options: unknown) {
    const state = wrapper.generateContextState.call(this, options);
    if (state.functionCall)
      return { ...state, functionCall: { initiallyEngaged: false, disengageInitiallyEngaged: [] } };
    const prefixTriggers = state.prefixTriggers?.filter(
      (trigger: { type: string }) => trigger.type !== 'functionCall',
    );
    const noPrefixTrigger =
      state.noPrefixTrigger?.type === 'functionCall' ? undefined : state.noPrefixTrigger;
    return { ...state, prefixTriggers, noPrefixTrigger, detectFunctionCalls: false };
  };
  return ignoring;
}

async function generate(request: GenerateRequest): Promise<void> {
  const controller = new AbortController();
  running.set(request.id, controller);
  const { history, functions } = request;
  const tokenizer = runtime!.model.tokenizer;
  // The prompt exactly as the model sees it: the chat template applied (with the offered functions documented
  // as the template does), then tokenized. Counted before generating only when it could matter for the limit (a
  // long prompt, a large limit, any tools); otherwise after the answer, since rendering and tokenizing cost the
  // first token a few milliseconds.
  let prompt: unknown[] | undefined;
  const promptOf = () =>
    (prompt ??= runtime!.chatWrapper
      .generateContextState({ chatHistory: history, availableFunctions: functions })
      .contextText.tokenize(tokenizer));
  const countPrompt = () => promptOf().length;
  const slot = await acquire(controller.signal, history, promptOf);
  if (!slot) {
    // Abandoned while queued: nothing was generated; the prompt is still what the request asked to run.
    running.delete(request.id);
    send({
      type: 'aborted',
      id: request.id,
      promptTokens: safely(countPrompt),
      completionTokens: 0,
      reasoningTokens: 0,
    });
    return;
  }
  const { sequence } = slot;
  const chat = request.forceCall ? slot.callingChat : request.answerOnly ? slot.answeringChat : slot.chat;
  let completionTokens = 0;
  let reasoningTokens = 0;
  const calls = new ToolCallStream(request.id);
  try {
    if (controller.signal.aborted) return;
    const contextSize: number = sequence.contextSize;
    const wanted = request.maxTokens ?? runtime!.defaultMaxTokens;
    if (
      (functions || historyChars(history) + TEMPLATE_SLACK_CHARS + wanted > contextSize) &&
      countPrompt() >= contextSize
    ) {
      send({
        type: 'error',
        id: request.id,
        code: 'context_length_exceeded',
        message: `The prompt is ${prompt!.length} tokens; this model's context holds ${contextSize}.`,
      });
      return;
    }
    const maxTokens = completionLimit(
      request.maxTokens,
      runtime!.defaultMaxTokens,
      contextSize,
      prompt?.length,
    );
    // The start of a long prompt the sequence already holds (evaluated for an earlier request): not evaluated again.
    const cachedTokens =
      historyChars(history) >= PREFIX_MATCH_MIN_CHARS
        ? (sequence.compareContextTokens(promptOf()).firstDifferentIndex as number)
        : 0;
    const result = await chat.generateResponse(history, {
      maxTokens,
      ...samplingFor(request, runtime!.ggufSampling),
      customStopTriggers: request.stop?.length ? request.stop : undefined,
      signal: controller.signal,
      stopOnAbortSignal: true,
      // node-llama-cpp closes the thought section when its budget is spent (0: the model answers at once).
      budgets: { thoughtTokens: request.thoughtBudget },
      onResponseChunk: (chunk: { type?: string; segmentType?: string; text: string; tokens: unknown[] }) => {
        completionTokens += chunk.tokens.length;
        if (chunk.type === 'segment' && chunk.segmentType === 'thought') {
          reasoningTokens += chunk.tokens.length;
          if (chunk.text) send({ type: 'thought', id: request.id, text: chunk.text });
        } else if (chunk.type === undefined && chunk.text)
          send({ type: 'text', id: request.id, text: chunk.text });
      },
      ...(functions
        ? {
            functions,
            maxParallelFunctionCalls: request.maxParallelCalls,
            onFunctionCallParamsChunk: (chunk: {
              callIndex: number;
              functionName: string;
              paramsChunk: string;
            }) => calls.add(chunk.callIndex, chunk.functionName, chunk.paramsChunk),
          }
        : {}),
    });
    if (controller.signal.aborted) return;
    // The limit ends the answer (maxTokens), or a full context does: both are `length`, as OpenAI reports them.
    const length = result.metadata?.stopReason === 'maxTokens' || completionTokens >= maxTokens;
    // A call's tokens (the template's call syntax, the name, the arguments) are the model's output too.
    const called: Array<{ raw: unknown }> = result.functionCalls ?? [];
    for (const call of called)
      completionTokens += runtime!.module.LlamaText.fromJSON(call.raw).tokenize(tokenizer).length;
    const finishReason = length ? 'length' : called.length ? 'tool_calls' : 'stop';
    send({
      type: 'done',
      id: request.id,
      finishReason,
      promptTokens: countPrompt(),
      cachedTokens,
      completionTokens,
      reasoningTokens,
    });
  } catch (error) {
    if (!controller.signal.aborted)
      send({
        type: 'error',
        id: request.id,
        message: error instanceof Error ? error.message : String(error),
      });
  } finally {
    running.delete(request.id);
    // An abandoned request is still accounted, exactly: what the prompt was and what had been generated (a call
    // cut short counts the tokens of its name and arguments so far).
    if (controller.signal.aborted) {
      completionTokens += calls.tokens(tokenizer);
      send({
        type: 'aborted',
        id: request.id,
        promptTokens: safely(countPrompt),
        completionTokens,
        reasoningTokens,
      });
    }
    // The sequence keeps this request's tokens: a next request that starts the same way reuses them (see acquire).
    release(slot);
  }
}

/**
 * Tool calls as the model writes them: a call's start (its name) when its first arguments arrive, then the
 * arguments as generated. Whitespace after the JSON (the grammar lets the model pad before it closes the call) is
 * held back until more text follows, so what a client collects is the JSON text itself.
 */
class ToolCallStream {
  private readonly calls = new Map<number, { name: string; text: string; held: string }>();

  constructor(private readonly requestId: number) {}

  add(index: number, name: string, chunk: string): void {
    let call = this.calls.get(index);
    if (!call) {
      call = { name, text: '', held: '' };
      this.calls.set(index, call);
      send({ type: 'callStart', id: this.requestId, index, name });
    }
    const text = call.held + chunk;
    const kept = text.trimEnd();
    call.held = text.slice(kept.length);
    if (!kept) return;
    call.text += kept;
    send({ type: 'callArguments', id: this.requestId, index, text: kept });
  }

  /** The tokens of the calls written so far (for an abandoned request: no call was finished to count). */
  tokens(tokenizer: (text: string) => unknown[]): number {
    let count = 0;
    for (const call of this.calls.values()) count += tokenizer(call.name + call.text + call.held).length;
    return count;
  }
}

function safely(count: () => number): number {
  try {
    return count();
  } catch {
    return 0;
  }
}

process.on('message', (message: ToWorker) => {
  if (message.type === 'init') void init(message);
  else if (message.type === 'generate') void generate(message);
  else if (message.type === 'embed') embed(message);
  else if (message.type === 'abort') running.get(message.id)?.abort();
});
// The gateway went away: so do we.
process.on('disconnect', () => process.exit(0));
