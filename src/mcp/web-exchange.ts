import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import type { Request, Response } from 'express';

/**
 * Headers the web-standard Request the SDK reads does not take from the Node request: the body has been read and
 * decoded already (it is handed over parsed), and the connection's own are not the request's.
 */
const NOT_PASSED = new Set(['content-length', 'content-encoding', 'transfer-encoding', 'connection', 'host']);

/**
 * The web-standard Request the MCP SDK's HTTP entries take, for an Express request whose body has been read (the
 * caller hands the parsed body to the SDK beside it). `signal` fires when the client goes away, so the SDK
 * abandons the exchange. Its origin is a fixed one: nothing reads it, and a Host header that is no host name would
 * make a URL of it throw.
 */
export function webRequestOf(req: Request, signal: AbortSignal): globalThis.Request {
  const headers = new Headers();
  for (const [name, value] of Object.entries(req.headers)) {
    if (value === undefined || NOT_PASSED.has(name)) continue;
    for (const each of Array.isArray(value) ? value : [value]) headers.append(name, each);
  }
  return new globalThis.Request(new URL(req.originalUrl, 'http://localhost'), {
    method: req.method,
    headers,
    signal,
  });
}

/** Writes the SDK's web-standard Response to the Express response: status, headers, then the body as it comes. */
export async function sendWebResponse(answer: globalThis.Response, res: Response): Promise<void> {
  res.status(answer.status);
  answer.headers.forEach((value, name) => res.setHeader(name, value));
  if (!answer.body) {
    res.end();
    return;
  }
  // A client that leaves mid-answer ends the pipeline early: nothing is left to send, and nothing to report.
  await pipeline(Readable.fromWeb(answer.body), res).catch(() => undefined);
}
