import type { GatewayException } from '../core/errors/gateway.exception';
import type { StreamStep } from '../providers/provider-adapter';
import type { Usage } from '../core/openai-types';
import type { SseEvent } from '../core/sse';

/** What the relay knows when a stream ends: the encoder may need it for its closing events. */
export interface StreamEnd {
  usage?: Usage;
}

/**
 * How one client API writes a relayed stream. The family decodes its upstream's stream into steps of OpenAI chunks
 * (for accounting and for encoders that translate), each with the upstream's own event where the family has one;
 * the encoder turns each step into the bytes the client's API expects: OpenAI chunks (chat completions),
 * Anthropic events (Messages, translated), or the upstream's own event unchanged (Messages to an Anthropic backend).
 */
export interface StreamEncoder {
  /** The wire text for one upstream event (`step.upstream`, or an empty event) and its step ('' for nothing). */
  event(event: SseEvent, step: StreamStep): string;
  /** The wire text that closes a whole stream. */
  end(end: StreamEnd): string;
  /** The wire text of an error after the 200 went out (the stream ends after it). */
  error(exception: GatewayException): string;
}
