import { CACHE_WRITE_1H, type ChatCompletion, type Usage } from '../../core/openai-types';
import { randomId } from '../../core/random-id';
import { parseArguments } from '../../core/message-parts';
import type { ContentBlock } from './dto/message-blocks';
import { gatewaySignature } from './translated-thinking';

/** OpenAI finish_reason -> Anthropic stop_reason (the reverse of the "Model families" table in docs/backends.md). */
const STOP_REASONS: Record<string, string> = {
  stop: 'end_turn',
  length: 'max_tokens',
  tool_calls: 'tool_use',
  function_call: 'tool_use',
  content_filter: 'refusal',
};

export function stopReasonOf(finishReason: string | null | undefined): string {
  return STOP_REASONS[finishReason ?? 'stop'] ?? 'end_turn';
}

/**
 * Anthropic's `Usage` as a Message carries it (the SDK's type, every member present as Anthropic sends it).
 * What a translated backend cannot know is null (inference_geo, speed, server_tool_use); the tier is
 * `standard` (none of Anthropic's priority or batch tiers applies to another vendor's answer).
 */
export interface MessagesUsage {
  input_tokens: number;
  output_tokens: number;
  cache_creation_input_tokens: number;
  cache_read_input_tokens: number;
  cache_creation: { ephemeral_5m_input_tokens: number; ephemeral_1h_input_tokens: number };
  inference_geo: null;
  output_tokens_details: { thinking_tokens: number } | null;
  server_tool_use: null;
  service_tier: 'standard';
  speed: null;
}

/** Anthropic's `MessageDeltaUsage`: the cumulative counts a stream's message_delta carries (no tier, no cache breakdown). */
export type MessageDeltaUsage = Pick<
  MessagesUsage,
  | 'input_tokens'
  | 'output_tokens'
  | 'cache_creation_input_tokens'
  | 'cache_read_input_tokens'
  | 'output_tokens_details'
  | 'server_tool_use'
>;

/**
 * OpenAI usage -> Anthropic usage. Anthropic's input_tokens exclude cache reads and writes (reported beside
 * them), so the cached and cache-written parts of the prompt move there; the totals stay equal. The writes are
 * split by lifetime as the backend reported them (CACHE_WRITE_1H); a write of unknown lifetime counts as the
 * default 5-minute one.
 */
export function messagesUsage(usage: Usage | undefined): MessagesUsage {
  const cached = usage?.prompt_tokens_details?.cached_tokens ?? 0;
  const written = usage?.prompt_tokens_details?.cache_write_tokens ?? 0;
  const oneHour = Math.min(usage?.prompt_tokens_details?.[CACHE_WRITE_1H] ?? 0, written);
  const thinking = usage?.completion_tokens_details?.reasoning_tokens;
  return {
    input_tokens: Math.max(0, (usage?.prompt_tokens ?? 0) - cached - written),
    output_tokens: usage?.completion_tokens ?? 0,
    cache_creation_input_tokens: written,
    cache_read_input_tokens: cached,
    cache_creation: { ephemeral_5m_input_tokens: written - oneHour, ephemeral_1h_input_tokens: oneHour },
    inference_geo: null,
    output_tokens_details: typeof thinking === 'number' ? { thinking_tokens: thinking } : null,
    server_tool_use: null,
    service_tier: 'standard',
    speed: null,
  };
}

export function messageDeltaUsage(usage: Usage | undefined): MessageDeltaUsage {
  const {
    input_tokens,
    output_tokens,
    cache_creation_input_tokens,
    cache_read_input_tokens,
    output_tokens_details,
    server_tool_use,
  } = messagesUsage(usage);
  return {
    input_tokens,
    output_tokens,
    cache_creation_input_tokens,
    cache_read_input_tokens,
    output_tokens_details,
    server_tool_use,
  };
}

/** The Message members a translated answer has nothing for: no container, no refusal details, no cache diagnostics. */
export const ABSENT_MESSAGE_FIELDS = { stop_details: null, container: null, diagnostics: null } as const;

/** Blocks as the SDK's types have them: text with its citations (none), tool_use with its caller (the model itself). */
export function textBlock(text: string): { type: 'text'; text: string; citations: null } {
  return { type: 'text', text, citations: null };
}

export function toolUseBlock(
  id: string,
  name: string,
  input: unknown,
): { type: 'tool_use'; id: string; name: string; input: unknown; caller: { type: 'direct' } } {
  return { type: 'tool_use', id, name, input, caller: { type: 'direct' } };
}

/** `msg_...` from any upstream id (Messages ids start with msg_). */
export function messageId(upstreamId: string | undefined): string {
  const id = (upstreamId ?? '').replace(/[^A-Za-z0-9_-]/g, '');
  if (!id) return randomId('msg_', 24);
  return id.startsWith('msg_') ? id : `msg_${id}`;
}

/** A translated answer (OpenAI chat.completion) -> Anthropic's Message: thinking, text and tool_use blocks. */
export function chatToMessage(completion: ChatCompletion, clientModel: string): Record<string, unknown> {
  const choice = completion.choices[0];
  const message = (choice?.message ?? {}) as {
    content?: unknown;
    reasoning_content?: unknown;
    refusal?: unknown;
    tool_calls?: Array<{ id?: string; function?: { name?: string; arguments?: string } }>;
  };
  const content: ContentBlock[] = [];
  // OpenAI's refusal is its own field (content null, finish_reason stop): Anthropic's is stop_reason `refusal`,
  // and its words can only be text.
  const refused = typeof message.refusal === 'string' && message.refusal !== '';
  if (typeof message.reasoning_content === 'string' && message.reasoning_content) {
    content.push({
      type: 'thinking',
      thinking: message.reasoning_content,
      signature: gatewaySignature(message.reasoning_content),
    });
  }
  if (typeof message.content === 'string' && message.content) content.push(textBlock(message.content));
  if (refused) content.push(textBlock(message.refusal as string));
  for (const [i, call] of (message.tool_calls ?? []).entries()) {
    content.push(
      toolUseBlock(
        call.id ?? `toolu_${i}`,
        call.function?.name ?? '',
        parseArguments(call.function?.arguments),
      ),
    );
  }
  return {
    id: messageId(completion.id),
    type: 'message',
    role: 'assistant',
    model: clientModel,
    content,
    stop_reason: refused ? 'refusal' : stopReasonOf(choice?.finish_reason),
    stop_sequence: null,
    ...ABSENT_MESSAGE_FIELDS,
    usage: messagesUsage(completion.usage),
  };
}
