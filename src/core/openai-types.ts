/** The OpenAI chat wire shapes the gateway speaks to clients (every adapter maps into these). */
export interface Usage {
  prompt_tokens: number;
  completion_tokens: number;
  total_tokens: number;
  prompt_tokens_details?: Record<string, number>;
  completion_tokens_details?: Record<string, number>;
}

/**
 * Usage as the gateway carries it between a family's mapper and the client's wire: OpenAI's, where
 * `prompt_tokens` is every input token and `prompt_tokens_details` breaks out the cache reads (`cached_tokens`) and
 * writes (`cache_write_tokens`), and, where the vendor says it, the 1-hour part of the writes under this member of
 * the gateway's own. The Messages wire shows it as `cache_creation.ephemeral_1h_input_tokens`; a chat completions
 * client never sees it (`chatClientUsage`).
 */
export const CACHE_WRITE_1H = 'cache_write_1h_tokens';

/** The usage a chat completions client gets: OpenAI's members only (the gateway's 1-hour write count removed). */
export function chatClientUsage(usage: Usage): Usage {
  const details = usage.prompt_tokens_details;
  if (!details || !(CACHE_WRITE_1H in details)) return usage;
  const rest = { ...details };
  delete rest[CACHE_WRITE_1H];
  return { ...usage, prompt_tokens_details: rest };
}

export interface ChatCompletion {
  id: string;
  object: 'chat.completion';
  created: number;
  model: string;
  choices: Array<{
    index: number;
    message: Record<string, unknown>;
    finish_reason: string | null;
    logprobs?: unknown;
  }>;
  usage?: Usage;
  [extra: string]: unknown;
}

export interface ChatCompletionChunk {
  id: string;
  object: 'chat.completion.chunk';
  created: number;
  model: string;
  choices: Array<{
    index: number;
    delta: Record<string, unknown>;
    finish_reason: string | null;
    logprobs?: unknown;
  }>;
  usage?: Usage | null;
  [extra: string]: unknown;
}

function count(value: unknown): number {
  return typeof value === 'number' && Number.isFinite(value) && value >= 0 ? Math.round(value) : 0;
}

/** Usage with `total_tokens = prompt_tokens + completion_tokens`, whatever the upstream said. */
export function normalizeUsage(raw: unknown): Usage | undefined {
  if (!raw || typeof raw !== 'object') return undefined;
  const u = raw as Record<string, unknown>;
  const usage: Usage = {
    prompt_tokens: count(u.prompt_tokens),
    completion_tokens: count(u.completion_tokens),
    total_tokens: 0,
  };
  usage.total_tokens = usage.prompt_tokens + usage.completion_tokens;
  if (u.prompt_tokens_details && typeof u.prompt_tokens_details === 'object') {
    usage.prompt_tokens_details = u.prompt_tokens_details as Record<string, number>;
  }
  if (u.completion_tokens_details && typeof u.completion_tokens_details === 'object') {
    usage.completion_tokens_details = u.completion_tokens_details as Record<string, number>;
  }
  return usage;
}
