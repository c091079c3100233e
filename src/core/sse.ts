/**
 * One server-sent event as named and carried: `event:` (absent on OpenAI's streams) and the `data:` text. This is
 * the vocabulary of what a client is sent on an SSE stream, and of an upstream's own event when a family hands it
 * over for pass-through (the native encoders write it back as it came). Reading SSE from an upstream's bytes is a
 * family's business: providers/shared/sse-decoder.ts.
 */
export interface SseEvent {
  event?: string;
  id?: string;
  data: string;
}
