import type { SseEvent } from '../../src/core/sse';
import type { ProviderAdapter, StreamAnswer, StreamStep } from '../../src/providers/provider-adapter';
import type { UpstreamBody } from '../../src/providers/upstream-client';

/** Events as an upstream writes them on an SSE wire. */
export function sseText(events: Array<Partial<SseEvent> & { data: string }>): string {
  return events.map((e) => `${e.event ? `event: ${e.event}\n` : ''}data: ${e.data}\n\n`).join('');
}

/** A response body that delivers `reads` one by one, as separate socket reads (each a Uint8Array). */
export function bodyOf(reads: Array<string | Uint8Array>): UpstreamBody {
  const bytes = reads.map((read) => (typeof read === 'string' ? new TextEncoder().encode(read) : read));
  const iterate = async function* () {
    for (const read of bytes) yield read;
  };
  return {
    [Symbol.asyncIterator]: iterate,
    text: async () => Buffer.concat(bytes).toString('utf8'),
    json: async () => JSON.parse(Buffer.concat(bytes).toString('utf8')),
  };
}

/** Every batch a family's decoder yields for `body`, and the error it ended with, if any. */
export async function decodeAll(
  adapter: ProviderAdapter,
  body: UpstreamBody,
  answer: StreamAnswer = { request: { model: 'm', messages: [] } },
): Promise<{ batches: StreamStep[][]; steps: StreamStep[]; error?: unknown }> {
  const batches: StreamStep[][] = [];
  try {
    for await (const batch of adapter.decodeStream(body, answer)) batches.push(batch);
  } catch (error) {
    return { batches, steps: batches.flat(), error };
  }
  return { batches, steps: batches.flat() };
}
