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
 * A request's cost in micro-units of the billing currency (an integer: Redis counters and budgets never hold
 * floats). A price per million tokens is micro-units per token, so each kind of token times its price adds up
 * exactly; the sum is rounded once, to the nearest micro-unit. Undefined when the price is unknown.
 */
export function costInMicros(tokens: CostedTokens, price: Price | undefined): number | undefined {
  if (tokens.prompt === 0 && tokens.completion === 0) return 0; // nothing was spent, whatever the price
  if (!price) return undefined;
  const cached = Math.min(tokens.cached, tokens.prompt);
  const reasoning = Math.min(tokens.reasoning, tokens.completion);
  const micros =
    (tokens.prompt - cached) * price.input +
    cached * (price.cachedInput ?? price.input) +
    (tokens.completion - reasoning) * price.output +
    reasoning * (price.reasoning ?? price.output);
  return Math.round(micros);
}

/** The worst case a request can cost (what a budget reserves): its prompt at the input price, its completion allowance at the dearest output price. */
export function worstCaseMicros(promptTokens: number, completionTokens: number, price: Price): number {
  return Math.ceil(promptTokens * price.input + completionTokens * Math.max(price.output, price.reasoning ?? 0));
}
