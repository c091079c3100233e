import { randomBytes } from 'node:crypto';
import type { Usage } from '../../core/openai-types';
import type { ResponsesRequestDto } from './dto/responses-request.dto';
import type { ToolNames } from './responses-to-chat';

/** OpenAI-style ids: a type prefix and 48 hex digits. */
export function newId(prefix: 'resp' | 'msg' | 'fc' | 'rs'): string {
  return `${prefix}_${randomBytes(24).toString('hex')}`;
}

export type OutputItem = Record<string, unknown> & { id: string; type: string };

/** OpenAI's ResponseUsage: every member required, the details included. */
export interface ResponseUsage {
  input_tokens: number;
  input_tokens_details: { cached_tokens: number; cache_write_tokens: number };
  output_tokens: number;
  output_tokens_details: { reasoning_tokens: number };
  total_tokens: number;
}

/** Chat usage -> Responses usage: cache reads and writes are input tokens the details break out (Anthropic's cache_creation is cache_write_tokens). */
export function responseUsage(usage: Usage | undefined): ResponseUsage {
  const input = usage?.prompt_tokens ?? 0;
  const output = usage?.completion_tokens ?? 0;
  return {
    input_tokens: input,
    input_tokens_details: {
      cached_tokens: usage?.prompt_tokens_details?.cached_tokens ?? 0,
      cache_write_tokens: usage?.prompt_tokens_details?.cache_write_tokens ?? 0,
    },
    output_tokens: output,
    output_tokens_details: { reasoning_tokens: usage?.completion_tokens_details?.reasoning_tokens ?? 0 },
    total_tokens: input + output,
  };
}

/** How a chat finish_reason ends a response: `length` and `content_filter` leave it incomplete. */
export function statusOf(finishReason: string | null | undefined): {
  status: 'completed' | 'incomplete';
  incomplete_details: { reason: string } | null;
} {
  if (finishReason === 'length')
    return { status: 'incomplete', incomplete_details: { reason: 'max_output_tokens' } };
  if (finishReason === 'content_filter')
    return { status: 'incomplete', incomplete_details: { reason: 'content_filter' } };
  return { status: 'completed', incomplete_details: null };
}

/** The `response` object around its output: the request's settings echoed as OpenAI does. */
export class ResponseEnvelope {
  readonly id = newId('resp');
  readonly createdAt = Math.floor(Date.now() / 1000);

  constructor(private readonly dto: ResponsesRequestDto) {}

  /**
   * The response with `usage` once there is one (OpenAI's schema has it as an object, so a response still in
   * progress, or failed, leaves it out rather than sending null).
   */
  build(fields: {
    status: string;
    output: OutputItem[];
    usage: ResponseUsage | null;
    incomplete_details?: { reason: string } | null;
    error?: ResponseError | null;
  }): Record<string, unknown> {
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
      tools: (dto.tools ?? []).map(echoedTool),
      top_p: dto.top_p ?? 1,
      truncation: 'disabled',
      ...(fields.usage ? { usage: fields.usage } : {}),
      ...(typeof dto.user === 'string' ? { user: dto.user } : {}),
      metadata: dto.metadata ?? {},
    };
  }
}

/**
 * A tool as the response echoes it: a function tool always has `parameters` and `strict` (null when the
 * request left them out: the gateway does not enforce strict schemas on a translated backend, so it claims none).
 */
function echoedTool(tool: Record<string, unknown>): Record<string, unknown> {
  if (tool.type !== 'function') return tool;
  return {
    ...tool,
    parameters: tool.parameters ?? null,
    strict: typeof tool.strict === 'boolean' ? tool.strict : null,
  };
}

/** `response.error`: OpenAI's codes only (ResponseErrorCode); the gateway's own code stays readable in the message. */
export interface ResponseError {
  code: 'server_error' | 'rate_limit_exceeded';
  message: string;
}

const RATE_LIMITED = new Set(['rate_limit_exceeded', 'quota_exceeded', 'budget_exceeded']);

/**
 * A gateway error -> `response.error`. OpenAI's enum has no code for a backend that failed or went away, so
 * those are `server_error` (what Codex and the SDKs retry), limits are `rate_limit_exceeded`; the message
 * ends with the gateway's code, e.g. "... [upstream_unavailable]".
 */
export function responseError(code: string | null | undefined, message: string): ResponseError {
  const gatewayCode = code ?? 'server_error';
  return {
    code: RATE_LIMITED.has(gatewayCode) ? 'rate_limit_exceeded' : 'server_error',
    message: `${message} [${gatewayCode}]`,
  };
}

export function reasoningItem(id: string, text: string): OutputItem {
  return { id, type: 'reasoning', summary: [{ type: 'summary_text', text }] };
}

/** An `output_text` part: OpenAI's schema requires `logprobs` (empty: no backend's log probabilities are relayed). */
export function outputText(text: string): {
  type: 'output_text';
  text: string;
  annotations: [];
  logprobs: [];
} {
  return { type: 'output_text', text, annotations: [], logprobs: [] };
}

export function messageItem(id: string, text: string, status = 'completed'): OutputItem {
  return { id, type: 'message', status, role: 'assistant', content: [outputText(text)] };
}

/** A refusal: a message whose one part is `refusal` (OpenAI's Responses form of a model refusing). */
export function refusalItem(id: string, refusal: string, status = 'completed'): OutputItem {
  return { id, type: 'message', status, role: 'assistant', content: [{ type: 'refusal', refusal }] };
}

export function functionCallItem(
  id: string,
  callId: string,
  chatName: string,
  args: string,
  names: ToolNames,
  status = 'completed',
): OutputItem {
  const known = names.get(chatName);
  return {
    id,
    type: 'function_call',
    status,
    call_id: callId,
    name: known?.name ?? chatName,
    arguments: args,
    ...(known?.namespace ? { namespace: known.namespace } : {}),
  };
}
