import type { Price } from './price-book';

/** The token counts a cost is computed from (the usage record's own). */
export interface CostedTokens {
  prompt: number;
  /** Prompt tokens the vendor read from its cache (part of `prompt`). */
  cached: number;
  completion: number;
  /** Reasoning tokens (part of `completion`). */
  reasoning: number;
}

/**
 * A request's cost in nano-units of the billing currency (an integer: Redis counters and budgets never hold
 * floats). A price per million tokens is micro-units per token, 1000 nano-units: each kind of token times its
 * price adds up exactly and the sum is rounded once, to the nearest nano-unit. Nano, not micro: a small embedding
 * call (4 tokens at 0.02 per million) costs 80 nano-units, which micro-units would round to nothing every time.
 * Undefined when the price is unknown.
 */
export function costInNanos(tokens: CostedTokens, priced: Price | undefined): number | undefined {
  if (tokens.prompt === 0 && tokens.completion === 0) return 0; // nothing was spent, whatever the price
  if (!priced) return undefined;
  const price = ratesFor(tokens.prompt, priced);
  const cached = Math.min(tokens.cached, tokens.prompt);
  const reasoning = Math.min(tokens.reasoning, tokens.completion);
  const micros =
    (tokens.prompt - cached) * price.input +
    cached * (price.cachedInput ?? price.input) +
    (tokens.completion - reasoning) * price.output +
    reasoning * (price.reasoning ?? price.output);
  return Math.round(micros * NANOS_PER_MICRO);
}

/** The worst case a request can cost (what a budget reserves): its prompt at the input price, its completion allowance at the dearest output price. */
export function worstCaseNanos(promptTokens: number, completionTokens: number, priced: Price): number {
  const price = ratesFor(promptTokens, priced);
  return Math.ceil(
    (promptTokens * price.input + completionTokens * Math.max(price.output, price.reasoning ?? 0)) *
      NANOS_PER_MICRO,
  );
}

/**
 * The rates a request is billed at: a long-context tier (above N input tokens, as Anthropic and Google bill) applies
 * to the whole request, as the vendors apply it.
 */
function ratesFor(promptTokens: number, price: Price): Price {
  const tier = price.longContext;
  return tier && promptTokens > tier.above ? { ...price, ...tier } : price;
}

const NANOS_PER_MICRO = 1000;
