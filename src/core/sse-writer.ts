import type { ServerResponse as Response } from 'node:http';

/**
 * Opens an SSE response. The headers leave with the first events when those are already here (one socket
 * write instead of two), and on their own one event-loop turn later otherwise, so a client waiting for a
 * slow first token still sees the 200 at once.
 */
export function openSse(res: Response): void {
  res.statusCode = 200;
  res.setHeader('content-type', 'text/event-stream; charset=utf-8');
  res.setHeader('cache-control', 'no-cache');
  res.setHeader('connection', 'keep-alive');
  // Tell nginx-style proxies not to buffer the stream.
  res.setHeader('x-accel-buffering', 'no');
  setImmediate(() => {
    if (!res.headersSent && !res.writableEnded && !res.destroyed) res.flushHeaders();
    if (!res.writableEnded) compactSentHead(res);
  });
}

/** What Node keeps of a response's head after sending it (private to Node; compactSentHead reads them). */
interface SentHead {
  _header?: unknown;
  [key: symbol]: unknown;
}

/** Node's symbol for a response's header map (`kOutHeaders`), found on the first response that has one. */
let outHeaders: symbol | undefined;

/**
 * Once a stream's head has left, Node still keeps it twice for the stream's whole life: as the map of headers set
 * (`kOutHeaders`: an object in dictionary mode and a [name, value] array per header, ~2 KB for the ~15 headers a
 * stream sends) and as the text written (`_header`, built by one concatenation per header part: ~70 cons strings,
 * ~2 KB). Neither is read again once sent (no header can be set any more; `headersSent` reads `_header`), and a
 * held stream is what a replica's memory is counted in (docs/performance.md, held streams): the map is dropped and
 * the text flattened into one string. `getHeader` answers undefined after this; nothing in the gateway asks.
 * Tested by test/unit/sse-writer.spec.ts.
 */
export function compactSentHead(res: Response): void {
  if (!res.headersSent) return;
  const head = res as unknown as SentHead;
  // Latin-1 both ways: the head is written as Latin-1, and Node refuses header values outside it.
  if (typeof head._header === 'string') head._header = Buffer.from(head._header, 'latin1').toString('latin1');
  outHeaders ??= Object.getOwnPropertySymbols(res).find((s) => s.description === 'kOutHeaders');
  if (outHeaders && head[outHeaders]) head[outHeaders] = null;
  // Wrappers of writeHead set on this response (on-headers' Server-Timing hook, common/http/http-front.ts) have
  // done their work once the head left, and keep closures over the request: the prototype's writeHead refuses a
  // second head alike. Assigned, not deleted: a delete turns the response into a dictionary-mode object (~1 KB).
  if (Object.hasOwn(res, 'writeHead')) res.writeHead = (Object.getPrototypeOf(res) as Response).writeHead;
}

/** One `data:` event, as written on the wire. */
export function sseData(json: string): string {
  return `data: ${json}\n\n`;
}

/** SSE comments are ignored by every client: safe keep-alives. */
export function writeSseComment(res: Response, text: string): void {
  res.write(`: ${text}\n\n`);
}
