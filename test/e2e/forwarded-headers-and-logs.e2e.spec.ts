import { eventually } from '../support/eventually';
import { OpenAIUpstream } from '../support/openai-upstream';
import { startTestGateway, type TestGateway } from '../support/test-gateway';
import { waitForAccessLine } from '../support/logs';

describe('forwarded headers and the access log', () => {
  let upstream: OpenAIUpstream;
  let trusting: TestGateway;
  let distrusting: TestGateway;

  beforeAll(async () => {
    upstream = await new OpenAIUpstream().start();
    trusting = await startTestGateway({ upstreamUrl: upstream.url });
    // Same machine, but the loopback peer is not a configured proxy here.
    distrusting = await startTestGateway({
      upstreamUrl: upstream.url,
      config: { server: { trustedProxies: ['10.0.0.0/8'] } },
    });
  });
  afterAll(async () => {
    await distrusting.close();
    await trusting.close();
    await upstream.stop();
  });

  async function call(gw: TestGateway, team: string) {
    const { token } = await gw.teamToken(team);
    const response = await fetch(`${gw.url}/v1/chat/completions`, {
      method: 'POST',
      headers: {
        authorization: `Bearer ${token}`,
        'content-type': 'application/json',
        'x-forwarded-host': 'chat.example.com',
        'x-forwarded-for': '203.0.113.7',
        'x-forwarded-proto': 'https',
      },
      body: JSON.stringify({ model: 'echo', messages: [{ role: 'user', content: 'hello' }] }),
    });
    expect(response.status).toBe(200);
    return { token, line: await waitForAccessLine(gw, { team }) };
  }

  it('believes X-Forwarded-* from a configured proxy and logs the client host', async () => {
    const { line } = await call(trusting, 'via-proxy');
    expect(line).toMatchObject({ clientHost: 'chat.example.com', clientIp: '203.0.113.7', status: 200 });
  });

  it('ignores X-Forwarded-* from anyone else', async () => {
    const { line } = await call(distrusting, 'direct');
    // The peer's own address, and the host the client asked for (the gateway's own, without the port).
    expect(line).toMatchObject({ clientIp: '127.0.0.1', clientHost: new URL(distrusting.url).hostname });
  });

  it("logs the console's requests with their real path (the /console mount is not cut off), never the query", async () => {
    const paths = ['/console', '/console/', '/console/assets/app.js'];
    const ids: string[] = [];
    for (const path of paths) {
      const response = await fetch(`${trusting.url}${path}?secret=no`, { redirect: 'manual' });
      ids.push(response.headers.get('x-request-id')!);
      await response.body?.cancel();
    }
    await eventually(() => {
      const logged = ids.map(
        (id) => trusting.logs.find((l) => l.type === 'access' && l.requestId === id)?.path,
      );
      expect(logged).toEqual(paths);
    });
  });

  it('never writes a token (client, admin or upstream) to the log', async () => {
    const { token } = await call(trusting, 'secretive');
    const everything = trusting.rawLogs.join('');
    expect(everything).not.toContain(token);
    expect(everything).not.toContain(token.slice(-43));
    expect(everything).not.toContain('test-admin-key');
    expect(everything).not.toContain('upstream-secret-key');
  });
});
