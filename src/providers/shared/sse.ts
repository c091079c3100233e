import { createParser, type EventSourceMessage } from 'eventsource-parser';

export type SseEvent = EventSourceMessage;

/**
 * The one SSE reader: upstream body bytes -> events, as each event completes.
 * Uses eventsource-parser (spec-complete: CR/LF/CRLF, multi-line data, comments).
 */
export async function* readSse(body: AsyncIterable<Uint8Array>): AsyncGenerator<SseEvent> {
  const decoder = new TextDecoder();
  const ready: SseEvent[] = [];
  const parser = createParser({ onEvent: (event) => ready.push(event) });
  for await (const bytes of body) {
    parser.feed(decoder.decode(bytes, { stream: true }));
    while (ready.length) yield ready.shift()!;
  }
  parser.feed(decoder.decode());
  while (ready.length) yield ready.shift()!;
}
