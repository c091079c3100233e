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
  });
}

/** One `data:` event, as written on the wire. */
export function sseData(json: string): string {
  return `data: ${json}\n\n`;
}

/** SSE comments are ignored by every client: safe keep-alives. */
export function writeSseComment(res: Response, text: string): void {
  res.write(`: ${text}\n\n`);
}
