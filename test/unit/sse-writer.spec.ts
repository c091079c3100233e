import { createServer, request, ServerResponse, type IncomingMessage } from 'node:http';
import type { AddressInfo } from 'node:net';
import onHeaders from 'on-headers';
import { compactSentHead } from '../../src/core/sse-writer';

/** Node's private copies of a sent head, as compactSentHead finds them. */
function headOf(res: ServerResponse): { text: unknown; map: unknown } {
  const symbol = Object.getOwnPropertySymbols(res).find((s) => s.description === 'kOutHeaders')!;
  return {
    text: (res as unknown as { _header?: unknown })._header,
    map: (res as unknown as Record<symbol, unknown>)[symbol],
  };
}

describe('a held stream keeps no second copy of its sent head (compactSentHead)', () => {
  it('drops the header map and the writeHead hook, keeps the head text, and the stream goes on unchanged', async () => {
    let seen:
      { before: unknown; after: ReturnType<typeof headOf>; hooked: boolean; sent: boolean } | undefined;
    const server = createServer((_req, res) => {
      onHeaders(res, () => res.setHeader('server-timing', 'gateway;dur=1'));
      res.setHeader('x-request-id', 'r-1');
      res.setHeader('content-type', 'text/event-stream; charset=utf-8');
      res.write('data: one\n\n');
      const before = headOf(res).text;
      compactSentHead(res);
      seen = {
        before,
        after: headOf(res),
        hooked: res.writeHead !== ServerResponse.prototype.writeHead,
        sent: res.headersSent,
      };
      res.write('data: two\n\n');
      res.end('data: [DONE]\n\n');
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    try {
      const { port } = server.address() as AddressInfo;
      const answer = await new Promise<{ res: IncomingMessage; body: string }>((resolve, reject) => {
        request({ port, host: '127.0.0.1', path: '/' }, (res) => {
          let body = '';
          res.setEncoding('utf8');
          res.on('data', (text: string) => (body += text));
          res.on('end', () => resolve({ res, body }));
        })
          .on('error', reject)
          .end();
      });
      expect(answer.res.headers).toMatchObject({
        'x-request-id': 'r-1',
        'server-timing': 'gateway;dur=1',
        'transfer-encoding': 'chunked',
      });
      expect(answer.body).toBe('data: one\n\ndata: two\n\ndata: [DONE]\n\n');
      expect(seen?.sent).toBe(true);
      expect(seen?.after.text).toBe(seen?.before); // the same text, now one string
      expect(seen?.after.map).toBeNull();
      expect(seen?.hooked).toBe(false);
    } finally {
      await new Promise((resolve) => server.close(resolve));
    }
  });

  it('leaves a response whose head has not left alone', async () => {
    let kept: unknown;
    const server = createServer((_req, res) => {
      res.setHeader('x-request-id', 'r-2');
      compactSentHead(res);
      kept = res.getHeader('x-request-id');
      res.end('ok');
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    try {
      const { port } = server.address() as AddressInfo;
      const headers = await new Promise<IncomingMessage['headers']>((resolve, reject) => {
        request({ port, host: '127.0.0.1', path: '/' }, (res) => {
          res.resume();
          res.on('end', () => resolve(res.headers));
        })
          .on('error', reject)
          .end();
      });
      expect(kept).toBe('r-2');
      expect(headers['x-request-id']).toBe('r-2');
    } finally {
      await new Promise((resolve) => server.close(resolve));
    }
  });
});
