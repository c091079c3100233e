import { GatewayException } from '../../core/errors/gateway.exception';
import type { StreamStep } from '../stream-events';
import type { SseMapper } from '../shared/sse-decoder';
import type { ChatCompletionChunk, Usage } from '../../core/openai-types';
import { parseStreamEvent } from '../../core/json';
import type { SseEvent } from '../../core/sse';
import { finishReasonOf, usageOf, type AnthropicUsage } from './anthropic.response';

/** The Anthropic stream event fields this mapper reads (Anthropic streaming doc, "Event types"). */
interface AnthropicEvent {
  type?: string;
  index?: number;
  message?: { id?: string; model?: string; usage?: AnthropicUsage };
  content_block?: AnthropicBlock;
  delta?: {
    type?: string;
    text?: string;
    thinking?: string;
    signature?: string;
    partial_json?: string;
    stop_reason?: string | null;
  };
  usage?: AnthropicUsage;
  error?: { type?: string; message?: string };
}

interface AnthropicBlock {
  type?: string;
  id?: string;
  name?: string;
  text?: string;
  data?: string;
}

interface OpenBlock {
  type: string;
  toolIndex?: number;
  thinking: string;
  signature: string;
}

/**
 * Anthropic stream events -> OpenAI chunks, one event at a time (nothing is held back):
 * message_start -> the role chunk; text_delta -> content; thinking_delta -> reasoning_content;
 * a thinking block's stop -> its thinking_blocks entry (with the signature, for the round
 * trip); tool_use start + input_json_delta -> tool_calls; message_delta -> finish_reason;
 * message_stop -> the usage chunk. ping and unknown events are skipped; `error` throws.
 */
export class AnthropicStreamMapper implements SseMapper {
  private id = '';
  private model = '';
  private readonly created = Math.floor(Date.now() / 1000);
  private usage: AnthropicUsage = {};
  private readonly blocks = new Map<number, OpenBlock>();
  private tools = 0;

  constructor(private readonly onError: (status: number, body: unknown) => GatewayException) {}

  map(event: SseEvent): StreamStep {
    const data = parseStreamEvent<AnthropicEvent>(event.data);
    switch (data.type) {
      case 'message_start':
        this.id = String(data.message?.id ?? '');
        this.model = String(data.message?.model ?? '');
        this.usage = { ...data.message?.usage };
        return this.emit({ role: 'assistant', content: '' });
      case 'content_block_start':
        return this.blockStart(Number(data.index), data.content_block ?? {});
      case 'content_block_delta':
        return this.blockDelta(Number(data.index), data.delta ?? {});
      case 'content_block_stop':
        return this.blockStop(Number(data.index));
      case 'message_delta':
        // Usage in message_delta is cumulative: the latest values win, where given (a null cache count there means
        // "not repeated", and must not wipe message_start's).
        this.usage = { ...this.usage, ...given(data.usage) };
        return data.delta?.stop_reason
          ? this.emit({}, finishReasonOf(data.delta.stop_reason))
          : { chunks: [] };
      case 'message_stop':
        return { chunks: [this.chunk([], usageOf(this.usage))], done: true };
      case 'error':
        throw this.onError(statusOfErrorType(data.error?.type), data);
      default:
        return { chunks: [] }; // ping, and event types added later
    }
  }

  private blockStart(index: number, block: AnthropicBlock): StreamStep {
    const open: OpenBlock = { type: String(block.type), thinking: '', signature: '' };
    this.blocks.set(index, open);
    if (block.type === 'tool_use') {
      open.toolIndex = this.tools++;
      return this.emit({
        tool_calls: [
          {
            index: open.toolIndex,
            id: block.id,
            type: 'function',
            function: { name: block.name, arguments: '' },
          },
        ],
      });
    }
    if (block.type === 'redacted_thinking')
      return this.emit({ thinking_blocks: [{ type: 'redacted_thinking', data: block.data }] });
    if (block.type === 'text' && block.text) return this.emit({ content: block.text });
    return { chunks: [] };
  }

  private blockDelta(index: number, delta: NonNullable<AnthropicEvent['delta']>): StreamStep {
    const open = this.blocks.get(index);
    switch (delta.type) {
      case 'text_delta':
        return this.emit({ content: String(delta.text ?? '') });
      case 'thinking_delta':
        if (open) open.thinking += String(delta.thinking ?? '');
        return this.emit({ reasoning_content: String(delta.thinking ?? '') });
      case 'signature_delta':
        if (open) open.signature += String(delta.signature ?? '');
        return { chunks: [] };
      case 'input_json_delta':
        return this.emit({
          tool_calls: [
            { index: open?.toolIndex ?? 0, function: { arguments: String(delta.partial_json ?? '') } },
          ],
        });
      default:
        return { chunks: [] }; // citations_delta and later additions
    }
  }

  private blockStop(index: number): StreamStep {
    const open = this.blocks.get(index);
    this.blocks.delete(index);
    if (open?.type !== 'thinking') return { chunks: [] };
    return this.emit({
      thinking_blocks: [{ type: 'thinking', thinking: open.thinking, signature: open.signature }],
    });
  }

  private emit(delta: Record<string, unknown>, finishReason: string | null = null): StreamStep {
    return { chunks: [this.chunk([{ index: 0, delta, finish_reason: finishReason }])] };
  }

  private chunk(choices: ChatCompletionChunk['choices'], usage?: Usage): ChatCompletionChunk {
    const chunk: ChatCompletionChunk = {
      id: this.id,
      object: 'chat.completion.chunk',
      created: this.created,
      model: this.model,
      choices,
    };
    if (usage) chunk.usage = usage;
    return chunk;
  }
}

/** The HTTP status an in-stream Anthropic error type stands for (overloaded_error is their 529). */
export function statusOfErrorType(type: unknown): number {
  const statuses: Record<string, number> = {
    invalid_request_error: 400,
    authentication_error: 401,
    billing_error: 402,
    permission_error: 403,
    not_found_error: 404,
    request_too_large: 413,
    rate_limit_error: 429,
    api_error: 500,
    timeout_error: 504,
    overloaded_error: 529,
  };
  return statuses[String(type)] ?? 500;
}

/** The members of a usage that carry a value (null and undefined left out). */
function given(usage: AnthropicUsage | undefined): AnthropicUsage {
  const out: Record<string, unknown> = {};
  for (const [name, value] of Object.entries(usage ?? {}))
    if (value !== null && value !== undefined) out[name] = value;
  return out as AnthropicUsage;
}
