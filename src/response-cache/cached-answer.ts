import type { TokenCounts } from '../gateway/exchange';

/** A whole answer as the cache keeps it: what the client got, and what its first request was accounted as. */
export interface CachedAnswer {
  /** Written as a stream (SSE events from the first to the last) or as one JSON body. */
  stream: boolean;
  /** The bytes the client got, in its own API's wire. */
  body: string;
  /** The tokens the first request was accounted with (a hit is recorded with them, at no cost). */
  tokens: TokenCounts;
  /** The configured model that answered (a fallback's name when one did). */
  servedModel: string;
}

/** Format version: an entry of another version reads as a miss, so a change of format needs no flush. */
const VERSION = 1;

/** One Redis string: a JSON line of what the answer is, then its bytes as they were sent. */
export function serialiseAnswer(answer: CachedAnswer): string {
  const about = { v: VERSION, stream: answer.stream, tokens: answer.tokens, servedModel: answer.servedModel };
  return `${JSON.stringify(about)}\n${answer.body}`;
}

/** The answer an entry holds, or undefined for an entry this version cannot read. */
export function parseAnswer(entry: string): CachedAnswer | undefined {
  const newline = entry.indexOf('\n');
  if (newline < 0) return undefined;
  try {
    const about = JSON.parse(entry.slice(0, newline)) as Partial<CachedAnswer> & { v?: unknown };
    if (about.v !== VERSION || typeof about.stream !== 'boolean' || !about.tokens) return undefined;
    return {
      stream: about.stream,
      tokens: about.tokens,
      servedModel: String(about.servedModel ?? ''),
      body: entry.slice(newline + 1),
    };
  } catch {
    return undefined;
  }
}
