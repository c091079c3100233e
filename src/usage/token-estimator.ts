/**
 * Token counts the gateway has to work out itself: the prompt estimate reserved by
 * token limits at admission, and the completion of a stream the client abandoned
 * before the upstream reported usage. A real BPE tokenizer (o200k_base, GPT-4o's),
 * never characters/4. For other model families it is an estimate, and records say so.
 *
 * The encoder's tables cost ~200 ms of CPU and ~70 MB of RSS to load. They are loaded
 * once at boot (`loadTokenizer`), because loading them on first use would stall every
 * in-flight request on that replica for those 200 ms.
 */
type CountTokens = (text: string) => number;
let countTokensImpl: CountTokens | undefined;

export function loadTokenizer(): CountTokens {
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  countTokensImpl ??= (require('gpt-tokenizer/encoding/o200k_base') as { countTokens: CountTokens }).countTokens;
  return countTokensImpl;
}

export function countTokens(text: string): number {
  if (!text) return 0;
  return (countTokensImpl ?? loadTokenizer())(text);
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

/** The prompt's tokens as OpenAI's chat format counts them (messages, tools). */
export function estimatePromptTokens(messages: readonly MessageLike[], tools?: unknown): number {
  let total = REPLY_PRIMING;
  for (const message of messages) {
    total += PER_MESSAGE + countTokens(typeof message.role === 'string' ? message.role : '');
    if (typeof message.name === 'string') total += countTokens(message.name) + 1;
    total += contentTokens(message.content);
    if (message.tool_calls) total += countTokens(JSON.stringify(message.tool_calls));
  }
  if (tools) total += countTokens(JSON.stringify(tools));
  return total;
}

function contentTokens(content: unknown): number {
  if (typeof content === 'string') return countTokens(content);
  if (!Array.isArray(content)) return 0;
  let total = 0;
  for (const part of content as Array<{ type?: string; text?: unknown }>) {
    if (part?.type === 'text' && typeof part.text === 'string') total += countTokens(part.text);
    else if (part?.type === 'image_url') total += PER_IMAGE;
  }
  return total;
}

/**
 * Sets `completion_tokens_details.reasoning_tokens` from the reasoning text when the
 * upstream sent reasoning but did not count it. True when it had to count.
 */
export function fillReasoningTokens(usage: { completion_tokens_details?: Record<string, number> }, reasoningText: readonly string[]): boolean {
  if (reasoningText.length === 0 || typeof usage.completion_tokens_details?.reasoning_tokens === 'number') return false;
  usage.completion_tokens_details = { ...usage.completion_tokens_details, reasoning_tokens: countTokens(reasoningText.join('')) };
  return true;
}
