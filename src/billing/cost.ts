import type { Price } from './price-book';

/** The token counts a cost is computed from (the usage record's own). */
export interface CostedTokens {
  /** Every input token: uncached + cache reads + cache writes. */
  prompt: number;
  /** Prompt tokens the vendor read from its cache (part of `prompt`). */
  cached: number;
  /** Prompt tokens the vendor wrote to its cache (part of `prompt`, apart from `cached`), 1-hour writes included. */
  cacheWrite?: number;
  /** The part of `cacheWrite` written for an hour. */
  cacheWrite1h?: number;
  completion: number;
  /** Reasoning tokens (part of `completion`). */
  reasoning: number;
}

/** A request's tokens by the class each is billed at; the classes add up to prompt + completion. */
export interface TokenClasses {
  uncached: number;
  cacheRead: number;
  cacheWrite5m: number;
  cacheWrite1h: number;
  output: number;
  reasoning: number;
}

/**
 * Splits counts into billing classes. Each part is bounded by what is left of the prompt (a vendor reporting more
 * cached tokens than input cannot make a class negative): reads first, then 1-hour writes, then the other writes.
 */
export function tokenClasses(tokens: CostedTokens): TokenClasses {
  const prompt = Math.max(0, tokens.prompt);
  const cacheRead = clamp(tokens.cached, prompt);
  const writes = clamp(tokens.cacheWrite ?? 0, prompt - cacheRead);
  const cacheWrite1h = clamp(tokens.cacheWrite1h ?? 0, writes);
  const reasoning = clamp(tokens.reasoning, tokens.completion);
  return {
    uncached: prompt - cacheRead - writes,
    cacheRead,
    cacheWrite5m: writes - cacheWrite1h,
    cacheWrite1h,
    output: tokens.completion - reasoning,
    reasoning,
  };
}

/**
 * A request's cost in nano-units of the billing currency (an integer: Redis counters and budgets never hold
 * floats): the sum over its token classes, each at its own price per million tokens: uncached input at `input`,
 * cache reads at `cachedInput` (default `input`: a read never costs more than an uncached token), 5-minute cache
 * writes at `cacheWrite`, 1-hour ones at `cacheWrite1h`, output at `output`, reasoning at `reasoning` (default
 * `output`). A write costs more than input (Anthropic: 1.25x for 5 minutes, 2x for an hour) and has no safe default:
 * a request with writes whose price is unknown has an unknown cost, like one whose model has no price (flagged,
 * never billed as 0 or as input). A price per million tokens is micro-units per token, 1000 nano-units: each class
 * times its price adds up exactly and the sum is rounded once, to the nearest nano-unit. Nano, not micro: a small
 * embedding call (4 tokens at 0.02 per million) costs 80 nano-units, which micro-units would round to nothing.
 * Undefined when the price is unknown.
 */
export function costInNanos(tokens: CostedTokens, priced: Price | undefined): number | undefined {
  if (tokens.prompt === 0 && tokens.completion === 0) return 0; // nothing was spent, whatever the price
  if (!priced) return undefined;
  const price = ratesFor(tokens.prompt, priced);
  const classes = tokenClasses(tokens);
  if (classes.cacheWrite5m && price.cacheWrite === undefined) return undefined;
  if (classes.cacheWrite1h && price.cacheWrite1h === undefined) return undefined;
  const micros =
    classes.uncached * price.input +
    classes.cacheRead * (price.cachedInput ?? price.input) +
    classes.cacheWrite5m * (price.cacheWrite ?? 0) +
    classes.cacheWrite1h * (price.cacheWrite1h ?? 0) +
    classes.output * price.output +
    classes.reasoning * (price.reasoning ?? price.output);
  return Math.round(micros * NANOS_PER_MICRO);
}

/**
 * What the request would have cost with no prompt cache: every prompt token at the input price (at the same tier,
 * which counts all input either way). Its difference from costInNanos is what the cache saved (negative when writes
 * outweighed reads). Undefined when the price is unknown.
 */
export function costWithoutCacheNanos(tokens: CostedTokens, priced: Price | undefined): number | undefined {
  return costInNanos({ ...tokens, cached: 0, cacheWrite: 0, cacheWrite1h: 0 }, priced);
}

/**
 * The worst case a request can cost (what a budget reserves): its prompt at the input price, its completion
 * allowance at the dearest output price. Cache classes are unknown before the answer (reads make it cheaper, writes
 * dearer); the settlement replaces this with the cost by class.
 */
export function worstCaseNanos(promptTokens: number, completionTokens: number, priced: Price): number {
  const price = ratesFor(promptTokens, priced);
  return Math.ceil(
    (promptTokens * price.input + completionTokens * Math.max(price.output, price.reasoning ?? 0)) *
      NANOS_PER_MICRO,
  );
}

/**
 * The rates a request is billed at: a long-context tier (above N input tokens, as Anthropic and Google bill) applies
 * to the whole request, as the vendors apply it. `promptTokens` is every input token (cache reads and writes
 * included), as the vendors count it for the threshold.
 */
function ratesFor(promptTokens: number, price: Price): Price {
  const tier = price.longContext;
  return tier && promptTokens > tier.above ? { ...price, ...tier } : price;
}

function clamp(value: number, most: number): number {
  return Math.max(0, Math.min(value, most));
}

const NANOS_PER_MICRO = 1000;
