import type { ChatCompletion, Usage } from '../providers/shared/openai-types';
import { parseArguments } from '../providers/shared/message-parts';
import type { ContentBlock } from './dto/message-blocks';
import { gatewaySignature } from './translated-thinking';

/** OpenAI finish_reason -> Anthropic stop_reason (the reverse of the README's "Model families" table). */
const STOP_REASONS: Record<string, string> = { stop: 'end_turn', length: 'max_tokens', tool_calls: 'tool_use', function_call: 'tool_use', content_filter: 'refusal' };

export function stopReasonOf(finishReason: string | null | undefined): string {
  return STOP_REASONS[finishReason ?? 'stop'] ?? 'end_turn';
}

export interface MessagesUsage {
  input_tokens: number;
  output_tokens: number;
  cache_creation_input_tokens: number;
  cache_read_input_tokens: number;
}

/**
 * OpenAI usage -> Anthropic usage. Anthropic's input_tokens exclude cache reads (reported beside them), so the
 * cached part of the prompt moves to cache_read_input_tokens; the totals stay equal.
 */
export function messagesUsage(usage: Usage | undefined): MessagesUsage {
  const cached = usage?.prompt_tokens_details?.cached_tokens ?? 0;
  return {
    input_tokens: Math.max(0, (usage?.prompt_tokens ?? 0) - cached),
    output_tokens: usage?.completion_tokens ?? 0,
    cache_creation_input_tokens: 0,
    cache_read_input_tokens: cached,
  };
}

/** `msg_...` from any upstream id (Messages ids start with msg_). */
export function messageId(upstreamId: string | undefined): string {
  const id = (upstreamId ?? '').replace(/[^A-Za-z0-9_-]/g, '');
  return id.startsWith('msg_') ? id : `msg_${id || Date.now().toString(36)}`;
}

/** A translated answer (OpenAI chat.completion) -> Anthropic's Message: thinking, text and tool_use blocks. */
export function chatToMessage(completion: ChatCompletion, clientModel: string): Record<string, unknown> {
  const choice = completion.choices[0];
  const message = (choice?.message ?? {}) as { content?: unknown; reasoning_content?: unknown; tool_calls?: Array<{ id?: string; function?: { name?: string; arguments?: string } }> };
  const content: ContentBlock[] = [];
  if (typeof message.reasoning_content === 'string' && message.reasoning_content) {
    content.push({ type: 'thinking', thinking: message.reasoning_content, signature: gatewaySignature(message.reasoning_content) });
  }
  if (typeof message.content === 'string' && message.content) content.push({ type: 'text', text: message.content });
  for (const [i, call] of (message.tool_calls ?? []).entries()) {
    content.push({ type: 'tool_use', id: call.id ?? `toolu_${i}`, name: call.function?.name ?? '', input: parseArguments(call.function?.arguments) });
  }
  return {
    id: messageId(completion.id),
    type: 'message',
    role: 'assistant',
    model: clientModel,
    content,
    stop_reason: stopReasonOf(choice?.finish_reason),
    stop_sequence: null,
    usage: messagesUsage(completion.usage),
  };
}
