import { GatewayException } from '../../core/errors/gateway.exception';
import type { StreamStep } from '../stream-events';
import type { SseMapper } from '../shared/sse-decoder';
import { parseStreamEvent } from '../../core/json';
import type { ChatCompletion, ChatCompletionChunk, Usage } from '../../core/openai-types';
import type { SseEvent } from '../../core/sse';

/**
 * A Responses API answer read as chat, for what the gateway does with every answer whatever the client's API:
 * accounting (usage; the relayed text when usage is missing) and first-token timing. The client still gets the
 * backend's own Responses events and object (responses/native-responses-encoder.ts).
 */
interface ResponsesUsage {
  input_tokens?: number;
  input_tokens_details?: { cached_tokens?: number; cache_write_tokens?: number };
  output_tokens?: number;
  output_tokens_details?: { reasoning_tokens?: number };
}
interface ResponseObject {
  id?: string;
  model?: string;
  status?: string;
  output?: Array<{
    type?: string;
    content?: Array<{ type?: string; text?: string }>;
    summary?: Array<{ text?: string }>;
    call_id?: string;
    name?: string;
    arguments?: string;
  }>;
  usage?: ResponsesUsage | null;
  error?: { code?: string; message?: string } | null;
  incomplete_details?: { reason?: string } | null;
}

export function usageFromResponses(usage: ResponsesUsage | null | undefined): Usage | undefined {
  if (!usage) return undefined;
  const prompt = usage.input_tokens ?? 0;
  const completion = usage.output_tokens ?? 0;
  return {
    prompt_tokens: prompt,
    completion_tokens: completion,
    total_tokens: prompt + completion,
    prompt_tokens_details: {
      cached_tokens: usage.input_tokens_details?.cached_tokens ?? 0,
      ...(usage.input_tokens_details?.cache_write_tokens
        ? { cache_write_tokens: usage.input_tokens_details.cache_write_tokens }
        : {}),
    },
    completion_tokens_details: { reasoning_tokens: usage.output_tokens_details?.reasoning_tokens ?? 0 },
  };
}

function finishReasonOf(response: ResponseObject): string {
  if (response.status === 'incomplete')
    return response.incomplete_details?.reason === 'content_filter' ? 'content_filter' : 'length';
  return response.output?.some((item) => item.type === 'function_call') ? 'tool_calls' : 'stop';
}

/** A whole Response -> the chat.completion the accounting reads. */
export function completionFromResponse(body: unknown, backendId: string): ChatCompletion {
  const response = body as ResponseObject | null;
  if (!response || typeof response !== 'object' || !Array.isArray(response.output)) {
    throw new GatewayException('upstream_error', `Backend "${backendId}" sent a malformed response object.`);
  }
  // A 200 whose Response failed (the schema allows it, and agent SDKs have mistaken it for an empty answer): an
  // upstream error, in the client's own shape, never a completion with nothing in it.
  if (response.status === 'failed')
    throw failure(backendId, response.error?.code ?? undefined, response.error?.message ?? undefined);
  let text = '';
  let reasoning = '';
  const toolCalls: unknown[] = [];
  for (const item of response.output) {
    if (item.type === 'message') text += (item.content ?? []).map((part) => part.text ?? '').join('');
    else if (item.type === 'reasoning')
      reasoning += (item.summary ?? []).map((part) => part.text ?? '').join('');
    else if (item.type === 'function_call')
      toolCalls.push({
        id: item.call_id,
        type: 'function',
        function: { name: item.name, arguments: item.arguments },
      });
  }
  const message: Record<string, unknown> = {
    role: 'assistant',
    content: text || (toolCalls.length ? null : ''),
  };
  if (reasoning) message.reasoning_content = reasoning;
  if (toolCalls.length) message.tool_calls = toolCalls;
  return {
    id: String(response.id ?? ''),
    object: 'chat.completion',
    created: Math.floor(Date.now() / 1000),
    model: String(response.model ?? ''),
    choices: [{ index: 0, message, finish_reason: finishReasonOf(response), logprobs: null }],
    usage: usageFromResponses(response.usage),
  };
}

/** Responses stream events -> chat chunks (text, reasoning, tool calls, the final usage); a failure throws. */
export class ResponsesStreamMapper implements SseMapper {
  private tools = 0;
  private readonly toolIndex = new Map<number, number>();

  constructor(private readonly backendId: string) {}

  map(event: SseEvent): StreamStep {
    const data = parseStreamEvent<{
      type?: string;
      delta?: string;
      output_index?: number;
      item?: { type?: string; call_id?: string; name?: string };
      response?: ResponseObject;
      error?: unknown;
      message?: string;
      code?: string;
    }>(event.data, this.backendId);
    switch (data.type) {
      case 'response.output_text.delta':
        return this.emit({ content: String(data.delta ?? '') });
      case 'response.reasoning_summary_text.delta':
      case 'response.reasoning_text.delta':
        return this.emit({ reasoning_content: String(data.delta ?? '') });
      case 'response.output_item.added': {
        if (data.item?.type !== 'function_call') return { chunks: [] };
        const index = this.tools++;
        this.toolIndex.set(Number(data.output_index), index);
        return this.emit({
          tool_calls: [
            {
              index,
              id: data.item.call_id,
              type: 'function',
              function: { name: data.item.name, arguments: '' },
            },
          ],
        });
      }
      case 'response.function_call_arguments.delta':
        return this.emit({
          tool_calls: [
            {
              index: this.toolIndex.get(Number(data.output_index)) ?? 0,
              function: { arguments: String(data.delta ?? '') },
            },
          ],
        });
      case 'response.completed':
      case 'response.incomplete': {
        const response = data.response ?? {};
        const finish: ChatCompletionChunk = {
          ...this.base(),
          choices: [{ index: 0, delta: {}, finish_reason: finishReasonOf(response) }],
        };
        const usage = usageFromResponses(response.usage);
        return { chunks: usage ? [finish, { ...this.base(), choices: [], usage }] : [finish], done: true };
      }
      case 'response.failed':
        throw failure(this.backendId, data.response?.error?.code, data.response?.error?.message);
      case 'error': {
        const nested = (typeof data.error === 'object' && data.error ? data.error : data) as {
          code?: string;
          message?: string;
        };
        throw failure(this.backendId, nested.code, nested.message);
      }
      default:
        return { chunks: [] };
    }
  }

  private emit(delta: Record<string, unknown>): StreamStep {
    return { chunks: [{ ...this.base(), choices: [{ index: 0, delta, finish_reason: null }] }] };
  }

  private base(): Pick<ChatCompletionChunk, 'id' | 'object' | 'created' | 'model'> {
    return { id: '', object: 'chat.completion.chunk', created: 0, model: '' };
  }
}

function failure(backendId: string, code: string | undefined, message: string | undefined): GatewayException {
  return new GatewayException(
    'upstream_error',
    `Backend "${backendId}" failed the response${code ? ` (${code})` : ''}: ${message ?? 'no reason given'}`,
    { wireCode: code ?? null },
  );
}
