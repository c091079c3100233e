import type { ChatMessage } from '../core/chat-request';
import { MAX_KEPT_CHARS } from '../request-log/kept-content';
import type { Redactor } from '../request-log/redaction/redactor';

/** A message part as the GenAI conventions' message schemas name them (text, tool calls and results, reasoning). */
export type GenAiPart =
  | { type: 'text'; content: string }
  | { type: 'reasoning'; content: string }
  | { type: 'tool_call'; id?: string; name: string; arguments: unknown }
  | { type: 'tool_call_response'; id?: string; response: unknown }
  /** Anything else (an image, audio, a file): named by its type only, its bytes are not put on a span. */
  | { type: string };

/** One message of `gen_ai.input.messages` / `gen_ai.output.messages`. */
export interface GenAiMessage {
  role: 'system' | 'user' | 'assistant' | 'tool';
  parts: GenAiPart[];
  name?: string;
  /** Output messages only. */
  finish_reason?: string;
}

/** The request's chat messages in the conventions' input schema (`developer` is a system message there). */
export function inputMessages(messages: readonly ChatMessage[]): GenAiMessage[] {
  return messages.map((message) => {
    const role = message.role === 'developer' ? 'system' : message.role;
    const parts: GenAiPart[] =
      role === 'tool'
        ? [{ type: 'tool_call_response', id: message.tool_call_id, response: message.content }]
        : [...contentParts(message.content), ...toolCalls(message.tool_calls)];
    return message.name ? { role, parts, name: message.name } : { role, parts };
  });
}

/**
 * The answer as the pipeline keeps it for a team that keeps content (Exchange.answer: each choice's message, or a
 * stream's text as one assistant message) in the conventions' output schema. The finish reason is not kept there:
 * `tool_call` when the message calls tools, else `stop`.
 */
export function outputMessages(answer: unknown): GenAiMessage[] {
  if (!Array.isArray(answer)) return [];
  return answer
    .filter((message): message is Record<string, unknown> => typeof message === 'object' && message !== null)
    .map((message) => {
      const calls = toolCalls(message.tool_calls);
      const reasoning = message.reasoning_content;
      const parts: GenAiPart[] = [
        ...(typeof reasoning === 'string' && reasoning !== ''
          ? [{ type: 'reasoning' as const, content: reasoning }]
          : []),
        ...contentParts(message.content as ChatMessage['content']),
        ...calls,
      ];
      return { role: 'assistant', parts, finish_reason: calls.length ? 'tool_call' : 'stop' };
    });
}

/**
 * A content attribute's value: the messages as JSON, every string redacted by the gateway's one Redactor (the one the
 * request log uses). Past the request log's size cap (MAX_KEPT_CHARS) only its beginning is kept, redacted as text
 * (so it is no longer whole JSON): redaction walks every character, and a collector refuses huge attributes anyway.
 */
export function contentAttribute(messages: GenAiMessage[], redactor: Redactor): string {
  const json = JSON.stringify(messages);
  if (json.length <= MAX_KEPT_CHARS) return JSON.stringify(redactor.redactJson(messages));
  return redactor.redactText(json.slice(0, MAX_KEPT_CHARS));
}

function contentParts(content: ChatMessage['content'] | undefined): GenAiPart[] {
  if (typeof content === 'string') return content === '' ? [] : [{ type: 'text', content }];
  if (!Array.isArray(content)) return [];
  return content.map((part) =>
    part.type === 'text' && typeof part.text === 'string'
      ? { type: 'text', content: part.text }
      : { type: typeof part.type === 'string' ? part.type : 'unknown' },
  );
}

function toolCalls(calls: unknown): GenAiPart[] {
  if (!Array.isArray(calls)) return [];
  return calls.map((call: { id?: unknown; function?: { name?: unknown; arguments?: unknown } }) => ({
    type: 'tool_call',
    id: typeof call?.id === 'string' ? call.id : undefined,
    name: String(call?.function?.name ?? ''),
    arguments: call?.function?.arguments,
  }));
}
