import { createParser, type EventSourceMessage } from 'eventsource-parser';

export type SseEvent = EventSourceMessage;

/**
 * The one SSE reader: upstream body bytes -> events, as each event completes. Yields the
 * events each read completed together (never an empty batch), so the relay can write them
 * to the client in one go. Uses eventsource-parser (spec-complete: CR/LF/CRLF, multi-line
 * data, comments).
 */
export async function* readSse(body: AsyncIterable<Uint8Array>): AsyncGenerator<SseEvent[]> {
  const decoder = new TextDecoder();
  let ready: SseEvent[] = [];
  const parser = createParser({ onEvent: (event) => ready.push(event) });
  const take = () => {
    const batch = ready;
    ready = [];
    return batch;
  };
  for await (const bytes of body) {
    parser.feed(decoder.decode(bytes, { stream: true }));
    if (ready.length) yield take();
  }
  parser.feed(decoder.decode());
  if (ready.length) yield take();
}
