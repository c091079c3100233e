/**
 * How a local model samples when the client does not say. node-llama-cpp's own defaults are greedy decoding
 * (temperature 0) with no repeat penalty, under which a small model loops on prompts as plain as "Say hi"
 * until its context is full. The order of precedence, per setting: the client's request, then the GGUF's own
 * recommended generation settings (`general.sampling.*`, written by its publisher), then these defaults, which
 * follow llama.cpp's CLI (repeat penalty 1.1 over the last 64 tokens, min-p 0.05, top-k 40) with a low
 * temperature and a DRY penalty, which makes verbatim repetition of a sequence impossible. A client that sets
 * `temperature` or `top_p` chose its sampling: it gets no penalty it did not ask for (its `presence_penalty` and
 * `frequency_penalty` still apply); the completion limit (`local.defaultMaxTokens`) still ends every answer.
 */
export const SAMPLING_DEFAULTS = {
  temperature: 0.2,
  topP: 0.9,
  topK: 40,
  minP: 0.05,
  repeatPenalty: 1.1,
  repeatLastTokens: 64,
  dryStrength: 0.8,
} as const;

/** The `general.sampling` keys of a GGUF's metadata (llama.cpp's names), where its publisher set them. */
export interface GgufSampling {
  temp?: number;
  top_p?: number;
  top_k?: number;
  min_p?: number;
  penalty_repeat?: number;
  penalty_last_n?: number;
}

/** What the client asked for, in OpenAI's terms (undefined: not set). */
export interface RequestedSampling {
  temperature?: number;
  topP?: number;
  seed?: number;
  presencePenalty?: number;
  frequencyPenalty?: number;
}

/** node-llama-cpp's generateResponse options for one request. */
export interface SamplingOptions {
  temperature: number;
  topP: number;
  topK: number;
  minP: number;
  seed?: number;
  repeatPenalty: { penalty: number; lastTokens: number; presencePenalty?: number; frequencyPenalty?: number };
  dryRepeatPenalty?: { strength: number };
}

const number = (value: unknown): number | undefined =>
  typeof value === 'number' && Number.isFinite(value) ? value : undefined;

export function samplingFor(requested: RequestedSampling, gguf: GgufSampling | undefined): SamplingOptions {
  const fromGguf = gguf ?? {};
  // A client that chose its sampling (temperature or top_p) gets exactly that: no penalty it did not ask for.
  const clientChose = requested.temperature !== undefined || requested.topP !== undefined;
  // OpenAI's penalties range -2..2; node-llama-cpp's 0..1 (negative ones, which favour repetition, are dropped).
  const penalty = (value: number | undefined) =>
    value !== undefined && value > 0 ? Math.min(1, value / 2) : undefined;
  return {
    temperature: requested.temperature ?? number(fromGguf.temp) ?? SAMPLING_DEFAULTS.temperature,
    topP: requested.topP ?? number(fromGguf.top_p) ?? SAMPLING_DEFAULTS.topP,
    topK: number(fromGguf.top_k) ?? SAMPLING_DEFAULTS.topK,
    minP: number(fromGguf.min_p) ?? SAMPLING_DEFAULTS.minP,
    seed: requested.seed,
    repeatPenalty: {
      penalty: clientChose ? 1 : (number(fromGguf.penalty_repeat) ?? SAMPLING_DEFAULTS.repeatPenalty),
      lastTokens: number(fromGguf.penalty_last_n) ?? SAMPLING_DEFAULTS.repeatLastTokens,
      presencePenalty: penalty(requested.presencePenalty),
      frequencyPenalty: penalty(requested.frequencyPenalty),
    },
    dryRepeatPenalty: clientChose ? undefined : { strength: SAMPLING_DEFAULTS.dryStrength },
  };
}

/**
 * The completion limit for one request: the client's, or the configured default, never more than the context
 * has left after the prompt. `promptTokens` is undefined when the prompt was not counted because it cannot
 * matter (see local-worker.ts).
 */
export function completionLimit(
  requested: number | undefined,
  defaultMaxTokens: number,
  contextSize: number,
  promptTokens: number | undefined,
): number {
  const wanted = requested ?? defaultMaxTokens;
  return promptTokens === undefined
    ? Math.min(wanted, contextSize)
    : Math.max(1, Math.min(wanted, contextSize - promptTokens));
}
