/**
 * Token counts the gateway has to work out itself: the reservation token limits take at admission, and the
 * counts of a request the upstream reported no usage for (a stream the client abandoned, a server that never
 * sends usage). A real BPE tokenizer (o200k_base, GPT-4o's), never characters/4, for every count that is
 * billed; for other model families it is an estimate, and records say so.
 *
 * Three rules keep this off the critical path (docs/architecture.md):
 * - No input costs more than linear time. BPE is quadratic in the length of one pre-token, and a pre-token can
 *   be a whole run of one letter (200 KB of "a" took 28 s), so runs longer than MAX_RUN are counted in pieces.
 * - The admission only needs a cheap, safe estimate: the upstream reports exact counts for every answer that
 *   completes, and the reservation is settled to them. Prompts are reserved at one token per 3 UTF-8 bytes
 *   (o200k averages over 4 on English text), with no tokenizer (`reservationEstimate`).
 * - Exact counts (`countTokens`) run only in the token counter's worker thread (token-counter.ts), started when a
 *   count is needed: the encoder's tables cost ~200 ms of CPU and ~70 MB of memory to load, which neither the
 *   event loop nor the main heap carries.
 */
type CountTokens = (text: string) => number;
let countTokensImpl: CountTokens | undefined;

/** Whether this thread has loaded the encoder's tables (only the token counter's worker should). */
export function tokenizerLoaded(): boolean {
  return countTokensImpl !== undefined;
}

export function loadTokenizer(): CountTokens {
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  countTokensImpl ??= (require('gpt-tokenizer/encoding/o200k_base') as { countTokens: CountTokens })
    .countTokens;
  return countTokensImpl;
}

/** Runs of non-space (or of space) longer than this are counted in pieces of this size. */
export const MAX_RUN = 256;
const LONG_RUN = new RegExp(`\\S{${MAX_RUN + 1},}|\\s{${MAX_RUN + 1},}`, 'g');

/**
 * o200k_base tokens in `text`, in time linear in its length. Ordinary text (words, numbers, code) has no run
 * longer than MAX_RUN, so its count is exact; a longer run is counted in MAX_RUN-character pieces, which can
 * only add a token or two per piece.
 */
export function countTokens(text: string): number {
  if (!text) return 0;
  const count = countTokensImpl ?? loadTokenizer();
  let total = 0;
  let from = 0;
  for (const run of text.matchAll(LONG_RUN)) {
    total += count(text.slice(from, run.index));
    for (let at = 0; at < run[0].length; at += MAX_RUN) total += count(run[0].slice(at, at + MAX_RUN));
    from = run.index + run[0].length;
  }
  return total + count(from === 0 ? text : text.slice(from));
}

interface MessageLike {
  role?: unknown;
  name?: unknown;
  content?: unknown;
  tool_calls?: unknown;
}

/** Fixed costs of OpenAI's chat format: per message, and for priming the reply. */
const PER_MESSAGE = 3;
const REPLY_PRIMING = 3;
/** A low-detail image costs 85 tokens on OpenAI; detail is unknown here, so this is the floor. */
const PER_IMAGE = 85;

/** A chat prompt as texts to count plus the format's fixed tokens (messages, images). */
export interface PromptTexts {
  fixed: number;
  texts: string[];
}

/** The texts of a prompt that tokens are counted on, in OpenAI's chat format (messages, tools). */
export function promptTexts(messages: readonly MessageLike[], tools?: unknown): PromptTexts {
  const out: PromptTexts = { fixed: REPLY_PRIMING, texts: [] };
  for (const message of messages) {
    out.fixed += PER_MESSAGE;
    out.texts.push(typeof message.role === 'string' ? message.role : '');
    if (typeof message.name === 'string') {
      out.fixed += 1;
      out.texts.push(message.name);
    }
    if (typeof message.content === 'string') out.texts.push(message.content);
    else if (Array.isArray(message.content)) {
      for (const part of message.content as Array<{ type?: string; text?: unknown }>) {
        if (part?.type === 'text' && typeof part.text === 'string') out.texts.push(part.text);
        else if (part?.type === 'image_url') out.fixed += PER_IMAGE;
      }
    }
    if (message.tool_calls) out.texts.push(JSON.stringify(message.tool_calls));
  }
  if (tools) out.texts.push(JSON.stringify(tools));
  return out;
}

/** Prompts are reserved at one token per this many UTF-8 bytes. */
export const BYTES_PER_RESERVED_TOKEN = 3;

/**
 * What token limits reserve for a prompt at admission, and what a lease records: one token per 3 UTF-8 bytes
 * of its texts plus the format's fixed tokens, with no tokenizer. Settled to the real count at the end.
 */
export function reservationEstimate(prompt: PromptTexts): number {
  return prompt.fixed + bytesEstimate(prompt.texts);
}

/** One token per 3 UTF-8 bytes of `texts`. */
export function bytesEstimate(texts: readonly string[]): number {
  let bytes = 0;
  for (const text of texts) bytes += Buffer.byteLength(text, 'utf8');
  return Math.ceil(bytes / BYTES_PER_RESERVED_TOKEN);
}
