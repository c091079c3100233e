import { randomBytes } from 'node:crypto';
import type { Usage } from '../providers/shared/openai-types';
import type { ResponsesRequestDto } from './dto/responses-request.dto';
import type { ToolNames } from './responses-to-chat';

/** OpenAI-style ids: a type prefix and 48 hex digits. */
export function newId(prefix: 'resp' | 'msg' | 'fc' | 'rs'): string {
  return `${prefix}_${randomBytes(24).toString('hex')}`;
}

export type OutputItem = Record<string, unknown> & { id: string; type: string };

export interface ResponseUsage {
  input_tokens: number;
  input_tokens_details: { cached_tokens: number };
  output_tokens: number;
  output_tokens_details: { reasoning_tokens: number };
  total_tokens: number;
}

export function responseUsage(usage: Usage | undefined): ResponseUsage {
  const input = usage?.prompt_tokens ?? 0;
  const output = usage?.completion_tokens ?? 0;
  return {
    input_tokens: input,
    input_tokens_details: { cached_tokens: usage?.prompt_tokens_details?.cached_tokens ?? 0 },
    output_tokens: output,
    output_tokens_details: { reasoning_tokens: usage?.completion_tokens_details?.reasoning_tokens ?? 0 },
    total_tokens: input + output,
  };
}

/** How a chat finish_reason ends a response: `length` and `content_filter` leave it incomplete. */
export function statusOf(finishReason: string | null | undefined): { status: 'completed' | 'incomplete'; incomplete_details: { reason: string } | null } {
  if (finishReason === 'length') return { status: 'incomplete', incomplete_details: { reason: 'max_output_tokens' } };
  if (finishReason === 'content_filter') return { status: 'incomplete', incomplete_details: { reason: 'content_filter' } };
  return { status: 'completed', incomplete_details: null };
}

/** The `response` object around its output: the request's settings echoed as OpenAI does. */
export class ResponseEnvelope {
  readonly id = newId('resp');
  readonly createdAt = Math.floor(Date.now() / 1000);

  constructor(private readonly dto: ResponsesRequestDto) {}

  build(fields: { status: string; output: OutputItem[]; usage: ResponseUsage | null; incomplete_details?: { reason: string } | null; error?: { code: string; message: string } | null }): Record<string, unknown> {
    const dto = this.dto;
    return {
      id: this.id,
      object: 'response',
      created_at: this.createdAt,
      status: fields.status,
      ...(fields.status === 'completed' ? { completed_at: Math.floor(Date.now() / 1000) } : {}),
      error: fields.error ?? null,
      incomplete_details: fields.incomplete_details ?? null,
      instructions: dto.instructions ?? null,
      max_output_tokens: dto.max_output_tokens ?? null,
      model: dto.model,
      output: fields.output,
      parallel_tool_calls: dto.parallel_tool_calls ?? true,
      previous_response_id: dto.previous_response_id ?? null,
      reasoning: { effort: dto.reasoning?.effort ?? null, summary: dto.reasoning?.summary ?? null },
      store: dto.store !== false,
      temperature: dto.temperature ?? 1,
      text: dto.text ?? { format: { type: 'text' } },
      tool_choice: dto.tool_choice ?? 'auto',
      tools: dto.tools ?? [],
      top_p: dto.top_p ?? 1,
      truncation: 'disabled',
      usage: fields.usage,
      user: dto.user ?? null,
      metadata: dto.metadata ?? {},
    };
  }
}

export function reasoningItem(id: string, text: string): OutputItem {
  return { id, type: 'reasoning', summary: [{ type: 'summary_text', text }] };
}

export function messageItem(id: string, text: string, status = 'completed'): OutputItem {
  return { id, type: 'message', status, role: 'assistant', content: [{ type: 'output_text', text, annotations: [] }] };
}

export function functionCallItem(id: string, callId: string, chatName: string, args: string, names: ToolNames, status = 'completed'): OutputItem {
  const known = names.get(chatName);
  return { id, type: 'function_call', status, call_id: callId, name: known?.name ?? chatName, arguments: args, ...(known?.namespace ? { namespace: known.namespace } : {}) };
}
