import type { UpstreamBody, UpstreamResponse } from '../upstream-client';

/** Calls of one split request in flight at once (each holds a pooled connection while it runs). */
const AT_ONCE = 4;

/**
 * One gateway request a cloud takes only in parts (Titan embeds one text per call, Vertex caps the instances of a
 * `:predict`): `bodies` are sent through `sendOne` a few at a time and their 2xx answers read as JSON, in the order
 * of `bodies`. The first failure is the answer (`failed`: the family maps it like any error of its cloud); the
 * other answers of its turn are read to their end, so their pooled connections are free again.
 */
export async function sendInParts(
  bodies: string[],
  sendOne: (body: string) => Promise<UpstreamResponse>,
): Promise<{ failed: UpstreamResponse } | { answers: unknown[] }> {
  const answers: unknown[] = [];
  for (let at = 0; at < bodies.length; at += AT_ONCE) {
    const responses = await Promise.all(bodies.slice(at, at + AT_ONCE).map((body) => sendOne(body)));
    const failed = responses.find((response) => response.status < 200 || response.status >= 300);
    if (failed) {
      await Promise.all(responses.filter((r) => r !== failed).map((r) => r.body.text().catch(() => '')));
      return { failed };
    }
    for (const response of responses) answers.push(await response.body.json());
  }
  return { answers };
}

/** A 200 JSON answer the client made itself (the parts' answers put together as the cloud would have). */
export function jsonAnswer(value: unknown): UpstreamResponse {
  return {
    status: 200,
    headers: { 'content-type': 'application/json' },
    body: textBody(JSON.stringify(value)),
  };
}

/** A body a client made itself, already whole. */
export function textBody(text: string): UpstreamBody {
  return {
    json: () => Promise.resolve(JSON.parse(text) as unknown),
    text: () => Promise.resolve(text),
    async *[Symbol.asyncIterator]() {
      yield Buffer.from(text);
    },
  };
}
