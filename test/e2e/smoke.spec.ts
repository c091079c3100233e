import { OpenAIUpstream } from '../support/openai-upstream';
import { startTestGateway, type TestGateway } from '../support/test-gateway';

describe('smoke', () => {
  let upstream: OpenAIUpstream;
  let gw: TestGateway;
  beforeAll(async () => {
    upstream = await new OpenAIUpstream().start();
    gw = await startTestGateway({ upstreamUrl: upstream.url });
  });
  afterAll(async () => {
    await gw.close();
    await upstream.stop();
  });

  it('answers', async () => {
    const { token } = await gw.teamToken('smoke');
    const client = gw.openai(token);
    const reply = await client.chat.completions.create({ model: 'echo', messages: [{ role: 'user', content: 'hi there' }] });
    expect(reply.choices[0].message.content).toBe('echo: hi there');
  });
});
