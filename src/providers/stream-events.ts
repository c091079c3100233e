import type { ChatRequest } from '../core/chat-request';
import type { ChatCompletionChunk } from '../core/openai-types';
import type { ContentDelta } from '../core/delta-template';
import type { SseEvent } from '../core/sse';

/** A client's request in an API some family speaks itself (passed through, not translated). */
export type NativeApi = 'messages' | 'messages.count_tokens' | 'responses';

/**
 * One event of an upstream's stream as its family decoded it: the canonical form every client API and the
 * accounting read (OpenAI chat chunks), and, for a stream the client gets natively, the upstream's own event.
 */
export interface StreamStep {
  chunks: ChatCompletionChunk[];
  /** The upstream said the stream is complete (its end marker, or its body ended where that means complete). */
  done?: boolean;
  /**
   * The upstream event's JSON text when it already is the single chunk in `chunks`, unchanged (OpenAI-
   * compatible upstreams): the relay may send it as is instead of serialising the chunk again.
   */
  raw?: string;
  /**
   * Set when the event is an ordinary content delta read without parsing it (core/delta-template.ts): the relay
   * and the OpenAI encoder use this; `chunks` is then parsed only if something else asks for it.
   */
  delta?: ContentDelta;
  /** The upstream's own event (name and data), for the encoders that pass a native stream through as it came. */
  upstream?: SseEvent;
}

/**
 * A decoded stream: its events in the batches they arrived in (one upstream read, or what a local worker sent
 * in one turn), never an empty batch, so the relay writes each batch to the client in one go. A step that says
 * `done` ends it (what follows is read and dropped when the relay asks for the next batch). An in-band error
 * throws a GatewayException, after the batch of the events before it.
 */
export type StreamEvents = AsyncIterable<StreamStep[]>;

/** What a family needs to know to decode one streamed answer. */
export interface StreamAnswer {
  /** The chat request (a family whose stream has no end marker, Gemini, reads how many choices to wait for). */
  request: ChatRequest;
  /** Set when the answer is in the client's own API (a native call), not the family's chat format. */
  native?: NativeApi;
}
