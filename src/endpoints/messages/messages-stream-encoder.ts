import type { GatewayException } from '../../core/errors/gateway.exception';
import { anthropicErrorBody } from './anthropic-error-body';
import type { StreamStep } from '../../providers/provider-adapter';
import type { ChatCompletionChunk } from '../../core/openai-types';
import type { StreamEncoder, StreamEnd } from '../../streaming/stream-encoder';
import {
  ABSENT_MESSAGE_FIELDS,
  messageDeltaUsage,
  messageId,
  messagesUsage,
  stopReasonOf,
  textBlock,
  toolUseBlock,
} from './chat-to-messages';
import { gatewaySignature } from './translated-thinking';

/** One Anthropic stream event: the `event:` line is what the SDKs dispatch on, the JSON `type` repeats it. */
export function anthropicEvent(name: string, data: object): string {
  return `event: ${name}\ndata: ${JSON.stringify({ type: name, ...data })}\n\n`;
}

export function anthropicErrorEvent(exception: GatewayException): string {
  return `event: error\ndata: ${JSON.stringify(anthropicErrorBody(exception))}\n\n`;
}

type ToolCallDelta = { index?: number; id?: string; function?: { name?: string; arguments?: string } };

/**
 * OpenAI chunks (from any translated family) -> Anthropic's stream events, as the SDKs and Claude Code
 * accumulate them: message_start first (with the prompt's token estimate; the real count follows in
 * message_delta), then one block at a time with contiguous indices: reasoning in its own `thinking` block that
 * ends with a signature_delta, text in `text` blocks, each tool call in a `tool_use` block fed by
 * input_json_delta; message_delta (stop_reason, final usage) and message_stop close it.
 */
export class MessagesStreamEncoder implements StreamEncoder {
  private started = false;
  private index = -1;
  private open: 'text' | 'thinking' | 'tool_use' | undefined;
  private openTool = -1;
  private thinking = '';
  private stopReason = 'end_turn';
  /** OpenAI's refusal came (delta.refusal): its words go out as text, and the message stops for `refusal`. */
  private refused = false;

  constructor(
    private readonly clientModel: string,
    /** The prompt's tokens as estimated at admission: message_start must carry a real-looking count. */
    private readonly inputEstimate: number,
  ) {}

  event(_event: unknown, step: StreamStep): string {
    let out = '';
    for (const chunk of step.chunks) {
      out += this.start(chunk.id);
      const choice = chunk.choices?.find((c) => c.index === 0);
      if (!choice) continue;
      out += this.delta(choice.delta ?? {});
      if (choice.finish_reason) this.stopReason = stopReasonOf(choice.finish_reason);
    }
    return out;
  }

  end(end: StreamEnd): string {
    const usage = messageDeltaUsage(end.usage);
    const stopReason = this.refused ? 'refusal' : this.stopReason;
    const delta = { stop_reason: stopReason, stop_sequence: null, stop_details: null, container: null };
    return (
      this.start(undefined) +
      this.close() +
      anthropicEvent('message_delta', { delta, usage }) +
      anthropicEvent('message_stop', {})
    );
  }

  error(exception: GatewayException): string {
    return anthropicErrorEvent(exception);
  }

  private start(upstreamId: string | undefined): string {
    if (this.started) return '';
    this.started = true;
    const usage = { ...messagesUsage(undefined), input_tokens: this.inputEstimate };
    const message = {
      id: messageId(upstreamId),
      type: 'message',
      role: 'assistant',
      model: this.clientModel,
      content: [],
      stop_reason: null,
      stop_sequence: null,
      ...ABSENT_MESSAGE_FIELDS,
      usage,
    };
    return anthropicEvent('message_start', { message }) + anthropicEvent('ping', {});
  }

  private delta(delta: ChatCompletionChunk['choices'][number]['delta']): string {
    let out = '';
    if (typeof delta.reasoning_content === 'string' && delta.reasoning_content) {
      if (this.open !== 'thinking')
        out += this.close() + this.begin('thinking', { type: 'thinking', thinking: '', signature: '' });
      this.thinking += delta.reasoning_content;
      out += anthropicEvent('content_block_delta', {
        index: this.index,
        delta: { type: 'thinking_delta', thinking: delta.reasoning_content },
      });
    }
    const refusal = (delta as { refusal?: unknown }).refusal;
    if (typeof refusal === 'string' && refusal) this.refused = true;
    for (const text of [delta.content, refusal]) {
      if (typeof text !== 'string' || !text) continue;
      if (this.open !== 'text') out += this.close() + this.begin('text', textBlock(''));
      out += anthropicEvent('content_block_delta', {
        index: this.index,
        delta: { type: 'text_delta', text },
      });
    }
    for (const call of (Array.isArray(delta.tool_calls) ? delta.tool_calls : []) as ToolCallDelta[]) {
      const toolIndex = call.index ?? 0;
      if (this.open !== 'tool_use' || this.openTool !== toolIndex) {
        out +=
          this.close() +
          this.begin(
            'tool_use',
            toolUseBlock(call.id ?? `toolu_${toolIndex}`, call.function?.name ?? '', {}),
          );
        this.openTool = toolIndex;
      }
      const args = call.function?.arguments;
      if (typeof args === 'string' && args)
        out += anthropicEvent('content_block_delta', {
          index: this.index,
          delta: { type: 'input_json_delta', partial_json: args },
        });
    }
    return out;
  }

  private begin(kind: 'text' | 'thinking' | 'tool_use', block: object): string {
    this.open = kind;
    this.index += 1;
    return anthropicEvent('content_block_start', { index: this.index, content_block: block });
  }

  /** Closes the open block; a thinking block gets its signature first, as Anthropic sends it. */
  private close(): string {
    if (!this.open) return '';
    let out = '';
    if (this.open === 'thinking') {
      out += anthropicEvent('content_block_delta', {
        index: this.index,
        delta: { type: 'signature_delta', signature: gatewaySignature(this.thinking) },
      });
      this.thinking = '';
    }
    this.open = undefined;
    return out + anthropicEvent('content_block_stop', { index: this.index });
  }
}
