/** A price per million tokens (in the billing currency): equal to micro-units of currency per token. */
export interface Price {
  input: number;
  output: number;
  /** Prompt tokens read from the vendor's cache (default: `input`). */
  cachedInput?: number;
  reasoning?: number;
  /** Prompt tokens written to the vendor's cache for its default lifetime (Anthropic's 5 minutes). No default. */
  cacheWrite?: number;
  /** Prompt tokens written to the vendor's cache for an hour (Anthropic's `ttl: "1h"`). No default. */
  cacheWrite1h?: number;
  /** The rates of a request with more than `above` input tokens (a long-context tier), for the whole request. */
  longContext?: {
    above: number;
    input: number;
    output: number;
    cachedInput?: number;
    cacheWrite?: number;
    cacheWrite1h?: number;
  };
}
