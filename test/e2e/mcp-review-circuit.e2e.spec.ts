import { createServer, request as httpRequest, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { RemoteMcpServer } from '../support/mcp-remote-server';
import { OpenAIUpstream } from '../support/openai-upstream';
import { startTestGateway, type TestGateway } from '../support/test-gateway';

const TOKEN = 'review-remote-token-123456';

/**
 * Review probe (s9-review2): a remote server behind a reverse proxy that answers 504 for one slow call (its own
 * read timeout shorter than the server's timeoutMs), as nginx does. That call is one request's failure, yet it opens
 * the server's back-off for every team.
 */
describe('MCP review: one call answered 504 by a proxy', () => {
  let upstream: OpenAIUpstream;
  let remote: RemoteMcpServer;
  let proxy: Server;
  let gw: TestGateway;

  beforeAll(async () => {
    upstream = await new OpenAIUpstream().start();
    remote = await new RemoteMcpServer({ token: TOKEN }).start();
    const target = new URL(remote.url);
    proxy = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        const body = Buffer.concat(chunks);
        if (body.includes('"tools/call"') && body.includes('gateway-timeout-please')) {
          res.writeHead(504, { 'content-type': 'text/html' }).end('<html>504 Gateway Time-out</html>');
          return;
        }
        const out = httpRequest(
          {
            host: target.hostname,
            port: target.port,
            path: req.url,
            method: req.method,
            headers: req.headers,
          },
          (answer) => {
            res.writeHead(answer.statusCode ?? 502, answer.headers);
            answer.pipe(res);
          },
        );
        out.end(body);
      });
    });
    await new Promise<void>((resolve) => proxy.listen(0, '127.0.0.1', resolve));
    const port = (proxy.address() as AddressInfo).port;
    gw = await startTestGateway({
      upstreamUrl: upstream.url,
      config: {
        mcp: {
          backoff: { initialMs: 30_000, maxMs: 60_000 },
          servers: {
            shared: {
              url: `http://127.0.0.1:${port}${target.pathname}`,
              headers: { Authorization: `Bearer ${TOKEN}` },
              timeoutMs: 5000,
            },
          },
        },
        teams: {
          a: { mcp: { servers: ['shared'], tools: ['*'] } },
          b: { mcp: { servers: ['shared'], tools: ['*'] } },
        },
      },
    });
  });
  afterAll(async () => {
    await gw.close();
    await new Promise((resolve) => proxy.close(resolve));
    await Promise.all([remote.stop(), upstream.stop()]);
  });

  async function call(team: string, text: string) {
    const created = await gw.admin('POST', `/admin/v1/teams/${team}/tokens`, {});
    const res = await fetch(`${gw.url}/mcp`, {
      method: 'POST',
      headers: {
        authorization: `Bearer ${created.body.token}`,
        'content-type': 'application/json',
        accept: 'application/json, text/event-stream',
        'mcp-protocol-version': '2025-11-25',
      },
      body: JSON.stringify({
        jsonrpc: '2.0',
        id: 1,
        method: 'tools/call',
        params: { name: 'shared__echo', arguments: { text } },
      }),
    });
    return res.text();
  }

  it("team a's one call answered 504 does not take the server from team b", async () => {
    console.log('warm-up', await call('b', 'hello'));
    console.log('a', await call('a', 'gateway-timeout-please'));
    const b = await call('b', 'hello again');
    console.log('b', b);
    expect(b).toContain('hello again');
  });
});
