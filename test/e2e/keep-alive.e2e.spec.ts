import { Agent, request as httpRequest } from 'node:http';
import { OpenAIUpstream } from '../support/openai-upstream';
import { startTestGateway, type TestGateway } from '../support/test-gateway';

describe('stream keep-alives', () => {
  let upstream: OpenAIUpstream;
  let gw: TestGateway;
  beforeAll(async () => {
    upstream = await new OpenAIUpstream().start();
    upstream.delayMs = 350;
    gw = await startTestGateway({ upstreamUrl: upstream.url, config: { server: { sseKeepAliveMs: 100 } } });
  });
  afterAll(async () => {
    await gw.close();
    await upstream.stop();
  });

  it('sends SSE comments while the upstream is silent, which the SDK ignores', async () => {
    const { token } = await gw.teamToken('patient');
    const response = await fetch(`${gw.url}/v1/chat/completions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'slow', stream: true, messages: [{ role: 'user', content: 'a b' }] }),
    });
    const events = (await response.text()).split('\n\n').filter(Boolean);
    expect(events.filter((e) => e === ': keep-alive').length).toBeGreaterThanOrEqual(2);
    expect(events[events.length - 1]).toBe('data: [DONE]');

    const stream = await gw
      .openai(token)
      .chat.completions.create({ model: 'slow', stream: true, messages: [{ role: 'user', content: 'a b' }] });
    let text = '';
    for await (const chunk of stream) text += chunk.choices[0]?.delta.content ?? '';
    expect(text).toBe('echo: a b');
  });

  it('keeps an idle client connection open past Node’s 5 s default, for the proxy in front to reuse', async () => {
    const agent = new Agent({ keepAlive: true, maxSockets: 1 });
    const get = () =>
      new Promise<{ keepAlive: string | string[] | undefined; reused: boolean }>((resolve, reject) => {
        const req = httpRequest(`${gw.url}/health/live`, { agent }, (res) => {
          res.resume();
          res.on('end', () => resolve({ keepAlive: res.headers['keep-alive'], reused: req.reusedSocket }));
        });
        req.on('error', reject);
        req.end();
      });
    try {
      expect(await get()).toEqual({ keepAlive: 'timeout=65', reused: false });
      // An observation window, not a wait for state: the connection must still be open after Node's default.
      await new Promise((resolve) => setTimeout(resolve, 6_000));
      expect(await get()).toEqual({ keepAlive: 'timeout=65', reused: true });
    } finally {
      agent.destroy();
    }
  }, 30_000);
});
