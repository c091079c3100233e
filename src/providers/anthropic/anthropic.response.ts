import { GatewayException } from '../../core/errors/gateway.exception';
import { CACHE_WRITE_1H, type ChatCompletion, type Usage } from '../../core/openai-types';
import { randomId } from '../../core/random-id';

/** Anthropic `stop_reason` -> OpenAI `finish_reason` (the "Model families" table in docs/backends.md). */
const FINISH_REASONS: Record<string, string> = {
  end_turn: 'stop',
  stop_sequence: 'stop',
  pause_turn: 'stop',
  max_tokens: 'length',
  model_context_window_exceeded: 'length',
  tool_use: 'tool_calls',
  refusal: 'content_filter',
};

export function finishReasonOf(stopReason: unknown): string | null {
  if (typeof stopReason !== 'string') return null;
  return FINISH_REASONS[stopReason] ?? 'stop';
}

export interface AnthropicUsage {
  input_tokens?: number;
  output_tokens?: number;
  cache_creation_input_tokens?: number | null;
  cache_read_input_tokens?: number | null;
  /** The writes by lifetime (their sum is cache_creation_input_tokens). */
  cache_creation?: {
    ephemeral_5m_input_tokens?: number | null;
    ephemeral_1h_input_tokens?: number | null;
  } | null;
  output_tokens_details?: { thinking_tokens?: number } | null;
}

const n = (value: unknown) => (typeof value === 'number' && value > 0 ? value : 0);

/**
 * Anthropic usage -> OpenAI usage. Cache reads and writes are input tokens too, so they
 * count in prompt_tokens (reads in cached_tokens, writes in cache_write_tokens): total = prompt + completion holds.
 * The 1-hour writes, billed at their own price, are kept apart too (CACHE_WRITE_1H, part of cache_write_tokens).
 */
export function usageOf(usage: AnthropicUsage): Usage {
  const cacheRead = n(usage.cache_read_input_tokens);
  const cacheWrite = n(usage.cache_creation_input_tokens);
  const prompt = n(usage.input_tokens) + cacheWrite + cacheRead;
  const completion = n(usage.output_tokens);
  const out: Usage = {
    prompt_tokens: prompt,
    completion_tokens: completion,
    total_tokens: prompt + completion,
  };
  // OpenAI's names for both: cached_tokens (read) and cache_write_tokens (Responses' input_tokens_details has both).
  out.prompt_tokens_details = { cached_tokens: cacheRead, cache_write_tokens: cacheWrite };
  const oneHour = Math.min(n(usage.cache_creation?.ephemeral_1h_input_tokens), cacheWrite);
  if (oneHour) out.prompt_tokens_details[CACHE_WRITE_1H] = oneHour;
  const thinking = usage.output_tokens_details?.thinking_tokens;
  if (typeof thinking === 'number') out.completion_tokens_details = { reasoning_tokens: thinking };
  return out;
}

type Block = { type: string; [key: string]: unknown };

/** A Message's content blocks -> the OpenAI assistant message (reasoning and thinking blocks included). */
export function messageOf(content: Block[]): Record<string, unknown> {
  let text = '';
  let reasoning = '';
  const thinkingBlocks: Block[] = [];
  const toolCalls: unknown[] = [];
  for (const block of content) {
    if (block.type === 'text') text += String(block.text ?? '');
    else if (block.type === 'thinking') {
      reasoning += String(block.thinking ?? '');
      thinkingBlocks.push({ type: 'thinking', thinking: block.thinking, signature: block.signature });
    } else if (block.type === 'redacted_thinking')
      thinkingBlocks.push({ type: 'redacted_thinking', data: block.data });
    else if (block.type === 'tool_use') {
      toolCalls.push({
        id: block.id,
        type: 'function',
        function: { name: block.name, arguments: JSON.stringify(block.input ?? {}) },
      });
    }
  }
  // OpenAI's message always has `refusal` (null unless the model refused in its own field, which Anthropic has not).
  const message: Record<string, unknown> = {
    role: 'assistant',
    content: text || (toolCalls.length ? null : ''),
    refusal: null,
  };
  if (reasoning) message.reasoning_content = reasoning;
  if (thinkingBlocks.length) message.thinking_blocks = thinkingBlocks;
  if (toolCalls.length) message.tool_calls = toolCalls;
  return message;
}

/** A Messages answer (Anthropic's, or Claude's on a cloud) as a chat completion; malformed: a 502 naming the backend. */
export function completionOfMessage(body: unknown, backendId: string): ChatCompletion {
  const message = body as {
    id?: string;
    model?: string;
    content?: unknown;
    stop_reason?: unknown;
    usage?: object;
  } | null;
  if (!message || typeof message !== 'object' || !Array.isArray(message.content)) {
    throw new GatewayException('upstream_error', `Backend "${backendId}" sent a malformed message.`);
  }
  return {
    id: typeof message.id === 'string' ? message.id : randomId('msg_', 24),
    object: 'chat.completion',
    created: Math.floor(Date.now() / 1000),
    model: String(message.model ?? ''),
    choices: [
      {
        index: 0,
        message: messageOf(message.content as never[]),
        finish_reason: finishReasonOf(message.stop_reason) ?? 'stop',
        logprobs: null,
      },
    ],
    usage: usageOf(message.usage ?? {}),
  };
}
