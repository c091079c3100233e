import type { GatewayException } from '../core/errors/gateway.exception';
import type { StreamStep } from '../providers/provider-adapter';
import type { Usage } from '../core/openai-types';
import type { SseEvent } from '../core/sse';

/** What the relay knows when a stream ends: the encoder may need it for its closing events. */
export interface StreamEnd {
  usage?: Usage;
}

/**
 * How one client API writes a relayed stream. The relay reads upstream events and maps them to OpenAI chunks
 * (for accounting and for encoders that translate); the encoder turns each upstream event into the bytes the
 * client's API expects: OpenAI chunks (chat completions), Anthropic events (Messages, translated), or the
 * upstream's own event unchanged (Messages to an Anthropic backend).
 */
export interface StreamEncoder {
  /** The wire text for one upstream event and what the adapter mapped it to ('' for nothing). */
  event(event: SseEvent, step: StreamStep): string;
  /** The wire text that closes a whole stream. */
  end(end: StreamEnd): string;
  /** The wire text of an error after the 200 went out (the stream ends after it). */
  error(exception: GatewayException): string;
}
