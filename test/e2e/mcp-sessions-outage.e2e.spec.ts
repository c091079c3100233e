import { eventually } from '../support/eventually';
import { RemoteMcpServer } from '../support/mcp-remote-server';
import { OpenAIUpstream } from '../support/openai-upstream';
import { PrivateRedis } from '../support/redis-server';
import { startTestGateway, type TestGateway } from '../support/test-gateway';

const REMOTE_TOKEN = 'remote-server-credential';

/**
 * MCP sessions (2025 revisions) while Redis is down (docs/mcp.md, sessions and replicas): none is issued and none
 * checked, requests are still served; DELETE says it cannot end one; once Redis is back, sessions are checked again.
 */
describe('MCP sessions with Redis stopped and restarted', () => {
  let upstream: OpenAIUpstream;
  let remote: RemoteMcpServer;
  let redis: PrivateRedis;
  let gw: TestGateway;

  beforeAll(async () => {
    upstream = await new OpenAIUpstream().start();
    remote = await new RemoteMcpServer({ token: REMOTE_TOKEN }).start();
    redis = new PrivateRedis();
    await redis.start();
    gw = await startTestGateway({
      upstreamUrl: upstream.url,
      config: {
        redis: { url: redis.url, commandTimeoutMs: 500 },
        // The token is vouched for from memory meanwhile, so what is left to see is the sessions'.
        auth: { onOutage: 'last-known' },
        mcp: {
          servers: { remote: { url: remote.url, headers: { Authorization: `Bearer ${REMOTE_TOKEN}` } } },
        },
        teams: { builders: { mcp: { servers: ['remote'], tools: ['*'] } } },
      },
    });
  });

  afterAll(async () => {
    await gw.gateway.shutdown(200);
    gw.redis.disconnect();
    await redis.stop();
    await Promise.all([remote.stop(), upstream.stop()]);
  });

  function post(token: string, body: object, session?: string): Promise<Response> {
    return fetch(`${gw.url}/mcp`, {
      method: 'POST',
      headers: {
        authorization: `Bearer ${token}`,
        'content-type': 'application/json',
        accept: 'application/json, text/event-stream',
        'mcp-protocol-version': '2025-11-25',
        ...(session ? { 'mcp-session-id': session } : {}),
      },
      body: JSON.stringify(body),
    });
  }

  const initialize = {
    jsonrpc: '2.0',
    id: 1,
    method: 'initialize',
    params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'raw', version: '1' } },
  };
  const listTools = { jsonrpc: '2.0', id: 2, method: 'tools/list' };

  it('issues and checks none while Redis is down (requests still served, DELETE 503), and checks them again after', async () => {
    const created = await gw.admin('POST', '/admin/v1/teams/builders/tokens', {});
    const token = created.body.token as string;
    const session = (await post(token, initialize)).headers.get('mcp-session-id')!;
    expect(session).toBeTruthy();
    expect((await post(token, listTools, session)).status).toBe(200);
    expect((await post(token, listTools, 'never-issued')).status).toBe(404);

    await redis.stop();
    await eventually(async () => expect((await fetch(`${gw.url}/health/ready`)).status).toBe(503));
    const opened = await post(token, initialize);
    expect(opened.status).toBe(200);
    expect(opened.headers.get('mcp-session-id')).toBeNull();
    for (const id of [session, 'never-issued']) {
      const listed = await post(token, listTools, id);
      expect(listed.status).toBe(200);
      expect(((await listed.json()) as any).result.tools.length).toBeGreaterThan(0);
    }
    const ended = await fetch(`${gw.url}/mcp`, {
      method: 'DELETE',
      headers: { authorization: `Bearer ${token}`, 'mcp-session-id': session },
    });
    expect(ended.status).toBe(503);
    expect(await ended.json()).toMatchObject({ jsonrpc: '2.0', id: null, error: { code: -32603 } });
    expect(
      gw.logs.some((line) => String(line.msg).includes('MCP sessions are neither issued nor checked')),
    ).toBe(true);

    await redis.start();
    await eventually(
      async () => expect((await fetch(`${gw.url}/health/ready`)).status).toBe(200),
      10_000,
      100,
    );
    expect((await post(token, listTools, 'never-issued')).status).toBe(404);
    expect((await post(token, listTools, session)).status).toBe(200);
  });
});
