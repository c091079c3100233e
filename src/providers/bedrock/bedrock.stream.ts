import { GatewayException } from '../../core/errors/gateway.exception';
import type { SseEvent } from '../../core/sse';
import type { StreamStep } from '../stream-events';
import type { SseMapper } from '../shared/sse-decoder';
import { completeEvent, mayBeIncomplete } from './anthropic-shape';
import { EventStreamFrames, type EventFrame } from './event-stream';

/** How the family reads one streamed answer's frames: the mapper for its events, and its in-band errors. */
export interface BedrockStreamReading {
  /** The mapper of Anthropic's events (InvokeModelWithResponseStream's `chunk`s: base64 JSON of one event each). */
  anthropic: SseMapper;
  /** The mapper of ConverseStream's events (made when the first one arrives). */
  converse(): SseMapper;
  /** An exception frame (`:message-type: exception` or `error`) -> the error the client gets in band. */
  exception(type: string, message: string | undefined): GatewayException;
  /** Bytes that are not the event stream they should be (a frame that fails its CRC, a cut frame). */
  malformed(what: string): GatewayException;
}

/**
 * A Bedrock stream (AWS event-stream frames) -> batches of canonical steps, one batch per network read: frames are
 * reassembled across reads (event-stream.ts), `event` frames mapped (the Anthropic event inside a `chunk` is also
 * kept as the step's upstream event, for a native Messages client), an exception frame throws after the steps
 * before it. After the end the rest of the body is read and dropped (leaving early would destroy the pooled
 * connection).
 */
export async function* decodeBedrockStream(
  body: AsyncIterable<Uint8Array>,
  reading: BedrockStreamReading,
): AsyncGenerator<StreamStep[]> {
  const frames = new EventStreamFrames();
  let done = false;
  let mapper: SseMapper | undefined;
  for await (const bytes of body) {
    if (done) continue;
    let complete: EventFrame[];
    try {
      complete = frames.push(bytes);
    } catch (error) {
      throw reading.malformed((error as Error).message);
    }
    const steps: StreamStep[] = [];
    let failure: GatewayException | undefined;
    for (const frame of complete) {
      try {
        const event = eventOf(frame, reading);
        if (!event) continue;
        mapper ??= event.chunk ? reading.anthropic : reading.converse();
        const step = mapper.map(event.sent);
        step.upstream = event.forClient;
        steps.push(step);
        if (step.done) {
          done = true;
          break;
        }
      } catch (error) {
        failure = error instanceof GatewayException ? error : reading.malformed((error as Error).message);
        break;
      }
    }
    if (steps.length) yield steps;
    if (failure) throw failure;
  }
  if (done) return;
  if (frames.incomplete) throw reading.malformed('the stream ended inside a frame');
  const last = mapper?.end?.();
  if (last) yield [last];
}

/** An `event` frame's event (an exception frame throws its error; other frames are skipped). */
function eventOf(
  frame: EventFrame,
  reading: BedrockStreamReading,
): { sent: SseEvent; forClient: SseEvent; chunk: boolean } | undefined {
  const kind = frame.headers[':message-type'];
  if (kind === 'exception') {
    throw reading.exception(frame.headers[':exception-type'] ?? 'exception', messageOf(frame.payload));
  }
  if (kind === 'error') {
    throw reading.exception(frame.headers[':error-code'] ?? 'error', frame.headers[':error-message']);
  }
  if (kind !== 'event') return undefined;
  if (frame.headers[':event-type'] === 'chunk') return { ...chunkEvent(frame), chunk: true };
  const sse = converseEvent(frame);
  return { sent: sse, forClient: sse, chunk: false };
}

/**
 * `{"bytes":"<base64>"}` -> the Anthropic stream event it carries, named by its `type`: as Bedrock sent it, for the
 * accounting, and as an Anthropic client is sent it (Bedrock's own `amazon-bedrock-invocationMetrics` on
 * message_stop left out, the members Anthropic's API has and Bedrock leaves out added: anthropic-shape.ts).
 */
function chunkEvent(frame: EventFrame): { sent: SseEvent; forClient: SseEvent } {
  const { bytes } = JSON.parse(Buffer.from(frame.payload).toString('utf8')) as { bytes?: unknown };
  if (typeof bytes !== 'string') throw new SyntaxError('a chunk without bytes');
  const data = Buffer.from(bytes, 'base64').toString('utf8');
  // Bedrock writes the event's `type` first: a content delta (most events) is named without parsing it here (the
  // mapper parses it once); the few events that may change are parsed.
  const type = LEADING_TYPE.exec(data)?.[1];
  if (type !== undefined && type !== 'message_stop' && !mayBeIncomplete(type)) {
    const sent = { event: type, data };
    return { sent, forClient: sent };
  }
  const event = JSON.parse(data) as Record<string, unknown>;
  if (typeof event.type !== 'string') throw new SyntaxError('a chunk whose event has no type');
  const sent = { event: event.type, data };
  if ('amazon-bedrock-invocationMetrics' in event) {
    delete event['amazon-bedrock-invocationMetrics'];
    return { sent, forClient: { event: event.type, data: JSON.stringify(event) } };
  }
  if (!mayBeIncomplete(event.type)) return { sent, forClient: sent };
  return { sent, forClient: { event: event.type, data: JSON.stringify(completeEvent(event)) } };
}

const LEADING_TYPE = /^\{"type":"([a-z_]+)"/;

function converseEvent(frame: EventFrame): SseEvent {
  return { event: frame.headers[':event-type'], data: Buffer.from(frame.payload).toString('utf8') };
}

function messageOf(payload: Uint8Array): string | undefined {
  try {
    const body = JSON.parse(Buffer.from(payload).toString('utf8')) as {
      message?: unknown;
      Message?: unknown;
    };
    const message = body.message ?? body.Message;
    return typeof message === 'string' ? message : undefined;
  } catch {
    return undefined;
  }
}
