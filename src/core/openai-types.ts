/** The OpenAI chat wire shapes the gateway speaks to clients (every adapter maps into these). */
export interface Usage {
  prompt_tokens: number;
  completion_tokens: number;
  total_tokens: number;
  prompt_tokens_details?: Record<string, number>;
  completion_tokens_details?: Record<string, number>;
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
