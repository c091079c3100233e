import { OpenAIUpstream } from '../support/openai-upstream';
import { startTestGateway, type TestGateway } from '../support/test-gateway';

/**
 * A big chat body goes to an OpenAI-compatible backend as the bytes the client sent, with only the members the
 * gateway sets written anew (providers/shared/json-splice.ts): checked on the text the stand-in received.
 */
describe('Big chat bodies reach the backend as the client wrote them', () => {
  let upstream: OpenAIUpstream;
  let gw: TestGateway;
  let token: string;

  beforeAll(async () => {
    upstream = await new OpenAIUpstream().start();
    gw = await startTestGateway({
      upstreamUrl: upstream.url,
      config: {
        models: {
          alias: { backend: 'standin', upstreamModel: 'echo' },
          effort: { backend: 'standin', upstreamModel: 'echo', thinking: 'reasoning_effort' },
        },
      },
    });
    ({ token } = await gw.teamToken('bytes'));
  });
  afterAll(async () => {
    await gw.close();
    await upstream.stop();
  });

  // ~40 KB of content written with escapes a serialiser would not produce: they survive only if copied.
  const content = 'caf\\u00e9 \\"quoted\\" \\/ tab\\t '.repeat(1500);
  const messages = `[ {"role" : "system", "content": "be brief"},\n  {"role":"user", "content": "${content}"} ]`;
  const post = (text: string) =>
    fetch(`${gw.url}/v1/chat/completions`, { method: 'POST', headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' }, body: text });

  it('copies the messages byte for byte and sets the upstream model', async () => {
    const response = await post(`{"model": "alias", "messages": ${messages}, "seed" : 7.0, "user": "u-1"}`);
    expect(response.status).toBe(200);
    const answer = (await response.json()) as { model: string; choices: Array<{ message: { content: string } }> };
    expect(answer.model).toBe('alias');
    expect(answer.choices[0].message.content).toMatch(/^echo: café "quoted" \/ tab/);
    const seen = upstream.last();
    expect(seen.text).toContain(`"messages": ${messages}`);
    expect(seen.text).toContain('"seed" : 7.0');
    expect(seen.body).toEqual({ model: 'echo', messages: JSON.parse(messages), seed: 7, user: 'u-1' });
  });

  it('writes anew what it changes: stream options on a stream, max_tokens renamed for a reasoning_effort model', async () => {
    const response = await post(`{"model":"effort","messages":${messages},"max_tokens":4000,"stream":true,"stream_options":{"include_usage":false},"thinking":{"type":"enabled","budget_tokens":1024}}`);
    expect(response.status).toBe(200);
    const events = await response.text();
    expect(events.trimEnd().endsWith('data: [DONE]')).toBe(true);
    expect(events).not.toContain('"usage":{'); // the client did not ask for the usage chunk
    const seen = upstream.last();
    expect(seen.text).toContain(`"messages":${messages}`);
    expect(seen.body).toEqual({
      model: 'echo',
      messages: JSON.parse(messages),
      max_completion_tokens: 4000,
      stream: true,
      stream_options: { include_usage: true },
      reasoning_effort: 'low',
    });
  });

  it('writes the whole body anew when the client named a top-level field twice', async () => {
    const response = await post(`{"model":"nope","messages":${messages},"model":"alias"}`);
    expect(response.status).toBe(200);
    const seen = upstream.last();
    expect(seen.text.match(/"model"/g)).toHaveLength(1);
    expect(seen.text).not.toContain(messages);
    expect(seen.body).toEqual({ model: 'echo', messages: JSON.parse(messages) });
  });
});
