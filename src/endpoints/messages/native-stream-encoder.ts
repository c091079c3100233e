import type { GatewayException } from '../../core/errors/gateway.exception';
import type { SseEvent } from '../../core/sse';
import type { StreamEncoder } from '../../streaming/stream-encoder';
import { anthropicErrorEvent } from './messages-stream-encoder';

/**
 * An Anthropic backend's stream to a Messages client: every event as it came, byte for byte (thinking
 * signatures, betas' new block types, pings), except the model name in message_start, which is the one the
 * client asked for. The relay still maps each event for accounting; nothing is added but a closing error.
 */
export class NativeMessagesEncoder implements StreamEncoder {
  constructor(private readonly clientModel: string) {}

  event(event: SseEvent): string {
    const name = event.event ?? 'message';
    if (name !== 'message_start') return `event: ${name}\ndata: ${event.data}\n\n`;
    const data = JSON.parse(event.data) as { message?: { model?: string } };
    if (data.message) data.message.model = this.clientModel;
    return `event: ${name}\ndata: ${JSON.stringify(data)}\n\n`;
  }

  end(): string {
    return ''; // message_stop was the upstream's last event, already relayed
  }

  error(exception: GatewayException): string {
    return anthropicErrorEvent(exception);
  }
}
