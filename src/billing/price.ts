/** A price per million tokens (in the billing currency): equal to micro-units of currency per token. */
export interface Price {
  input: number;
  output: number;
  cachedInput?: number;
  reasoning?: number;
  /**
   * Prompt tokens written to the vendor's cache (Anthropic's cache writes), as the price data gives it: shown, not
   * billed apart yet (usage records do not keep cache writes apart; they are billed as input).
   */
  cacheWrite?: number;
  /** The rates of a request with more than `above` input tokens (a long-context tier), for the whole request. */
  longContext?: { above: number; input: number; output: number; cachedInput?: number; cacheWrite?: number };
}
