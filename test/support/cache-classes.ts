/**
 * Hand computations for tests: a vendor's usage (as its stand-in reported it, in the vendor's own members) read as
 * billing classes the vendor's documented way, and their cost at a price, worked out apart from src/billing.
 */
/** A vendor's usage as billing classes, read the vendor's own way (the stand-ins report as their vendors document). */
export interface Classes {
  uncached: number;
  reads: number;
  writes5m: number;
  writes1h: number;
  output: number;
}

/** Anthropic (and Claude on Bedrock): input_tokens is the uncached part; writes split by lifetime in cache_creation. */
export const anthropicClasses = (u: Record<string, any>): Classes => ({
  uncached: u.input_tokens,
  reads: u.cache_read_input_tokens,
  writes5m: u.cache_creation?.ephemeral_5m_input_tokens ?? u.cache_creation_input_tokens,
  writes1h: u.cache_creation?.ephemeral_1h_input_tokens ?? 0,
  output: u.output_tokens,
});
/** OpenAI: prompt_tokens counts every input token, cached_tokens the reads among them. */
export const openaiClasses = (u: Record<string, any>): Classes => ({
  uncached: u.prompt_tokens - u.prompt_tokens_details.cached_tokens,
  reads: u.prompt_tokens_details.cached_tokens,
  writes5m: 0,
  writes1h: 0,
  output: u.completion_tokens,
});
/** Gemini: promptTokenCount counts the cached content too. */
export const geminiClasses = (u: Record<string, any>): Classes => ({
  uncached: u.promptTokenCount - u.cachedContentTokenCount,
  reads: u.cachedContentTokenCount,
  writes5m: 0,
  writes1h: 0,
  output: u.candidatesTokenCount + (u.thoughtsTokenCount ?? 0),
});
/** Converse: inputTokens leaves the cache reads and writes out. */
export const converseClasses = (u: Record<string, any>): Classes => ({
  uncached: u.inputTokens,
  reads: u.cacheReadInputTokens,
  writes5m: u.cacheWriteInputTokens,
  writes1h: 0,
  output: u.outputTokens,
});

export interface Prices {
  input: number;
  cachedInput: number;
  cacheWrite?: number;
  cacheWrite1h?: number;
  output: number;
}

/** By hand: each class times its price per million tokens (micro-units per token, 1000 nano-units), rounded once. */
export function handCost(c: Classes, p: Prices): number {
  const priced = (tokens: number, price: number | undefined) => (tokens ? tokens * price! : 0);
  const micros =
    c.uncached * p.input +
    c.reads * p.cachedInput +
    priced(c.writes5m, p.cacheWrite) +
    priced(c.writes1h, p.cacheWrite1h) +
    c.output * p.output;
  return Math.round(micros * 1000);
}
