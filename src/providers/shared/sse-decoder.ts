import { createParser } from 'eventsource-parser';
import type { SseEvent } from '../../core/sse';
import type { StreamStep } from '../stream-events';

/** How a family whose stream is SSE reads its events; stateful per stream (a vendor spreads facts over events). */
export interface SseMapper {
  /** Throws a GatewayException when the upstream reports an error inside the stream. */
  map(event: SseEvent): StreamStep;
  /**
   * The upstream's body ended before a step said `done`: what the mapper still holds for the client and the
   * accounting, if anything (Gemini: the usage of an answer some of whose candidates never finished).
   */
  end?(): StreamStep | undefined;
}

/**
 * The SSE decoder, for families whose upstream streams SSE: body bytes -> the mapper's steps, in the batches each
 * read completed (eventsource-parser: CR/LF/CRLF, multi-line data, comments). Each step keeps its upstream event
 * (`upstream`) for native pass-through. One generator from bytes to steps: a second one between them would cost
 * a promise per read, which is per chunk on a token-by-token stream.
 */
export async function* decodeSse(
  body: AsyncIterable<Uint8Array>,
  mapper: SseMapper,
): AsyncGenerator<StreamStep[]> {
  const decoder = new TextDecoder();
  let ready: SseEvent[] = [];
  const parser = createParser({ onEvent: (event) => ready.push(event) });
  let done = false;
  /** The steps of the events parsed so far, up to the end marker; an in-band error after the steps before it. */
  const take = (): { steps: StreamStep[]; failure?: { error: unknown } } => {
    const events = ready;
    ready = [];
    const steps: StreamStep[] = [];
    for (const event of events) {
      let step: StreamStep;
      try {
        step = mapper.map(event);
      } catch (error) {
        return { steps, failure: { error } };
      }
      step.upstream = event;
      steps.push(step);
      if (step.done) {
        done = true;
        break;
      }
    }
    return { steps };
  };
  for await (const bytes of body) {
    // After the end marker the body is read to its end (leaving it early would destroy it and its pooled
    // connection), not parsed: nothing after the marker reaches anyone.
    if (done) continue;
    parser.feed(decoder.decode(bytes, { stream: true }));
    if (!ready.length) continue;
    const { steps, failure } = take();
    // The events before an in-band error still reach the client, then the error.
    if (steps.length) yield steps;
    if (failure) throw failure.error;
  }
  if (done) return;
  parser.feed(decoder.decode());
  if (ready.length) {
    const { steps, failure } = take();
    if (steps.length) yield steps;
    if (failure) throw failure.error;
    if (done) return;
  }
  const last = mapper.end?.();
  if (last) yield [last];
}
