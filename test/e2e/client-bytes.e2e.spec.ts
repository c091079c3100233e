import { countTokens } from 'gpt-tokenizer'; // o200k_base, as the gateway's estimate
import { OpenAIUpstream } from '../support/openai-upstream';
import { startTestGateway, type TestGateway } from '../support/test-gateway';
import { waitForUsageRecord } from '../support/usage';

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
    fetch(`${gw.url}/v1/chat/completions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
      body: text,
    });

  it('copies the messages byte for byte and sets the upstream model', async () => {
    const response = await post(`{"model": "alias", "messages": ${messages}, "seed" : 7.0, "user": "u-1"}`);
    expect(response.status).toBe(200);
    const answer = (await response.json()) as {
      model: string;
      choices: Array<{ message: { content: string } }>;
    };
    expect(answer.model).toBe('alias');
    expect(answer.choices[0].message.content).toMatch(/^echo: café "quoted" \/ tab/);
    const seen = upstream.last();
    expect(seen.text).toContain(`"messages": ${messages}`);
    expect(seen.text).toContain('"seed" : 7.0');
    expect(seen.body).toEqual({ model: 'echo', messages: JSON.parse(messages), seed: 7, user: 'u-1' });
    // A big body is handed to undici as a stream it cannot keep (upstream-client.ts): on the wire it is still one
    // body of a declared length, as a vendor expects, never chunked.
    expect(seen.headers['content-length']).toBe(String(Buffer.byteLength(seen.text)));
    expect(seen.headers['transfer-encoding']).toBeUndefined();
  });

  it('writes anew what it changes: stream options on a stream, max_tokens renamed for a reasoning_effort model', async () => {
    const response = await post(
      `{"model":"effort","messages":${messages},"max_tokens":4000,"stream":true,"stream_options":{"include_usage":false},"thinking":{"type":"enabled","budget_tokens":1024}}`,
    );
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

  // Bodies from 64 KB are decoded and parsed on later turns of the event loop (common/http/plain-json-body.ts).
  describe('bodies over 64 KB, parsed on later turns of the event loop', () => {
    const bigText = (tag: string) => `${tag} ${'x'.repeat(100_000)}`;
    const bigBody = (tag: string) =>
      JSON.stringify({ model: 'alias', messages: [{ role: 'user', content: bigText(tag) }] });

    it('answers a big body with a leading BOM, and refuses a big body that is not JSON in the error shape', async () => {
      const withBom = await post(`\ufeff${bigBody('bom')}`);
      expect(withBom.status).toBe(200);
      expect(upstream.last().body).toEqual({
        model: 'echo',
        messages: [{ role: 'user', content: bigText('bom') }],
      });

      const broken = await post(bigBody('broken').slice(0, -3));
      expect(broken.status).toBe(400);
      const error = (
        (await broken.json()) as { error: { type: string; code: string | null; message: string } }
      ).error;
      expect(error.type).toBe('invalid_request_error');
      expect(error.message).toMatch(/^The request body is not valid JSON/);
    });

    it('keeps each request its own body when big and small ones are parsed at the same time', async () => {
      const contents = Array.from({ length: 12 }, (_, i) => (i % 2 === 0 ? bigText(`req-${i}`) : `req-${i}`));
      const answers = await Promise.all(
        contents.map(async (content) => {
          const response = await post(
            JSON.stringify({ model: 'alias', messages: [{ role: 'user', content }] }),
          );
          expect(response.status).toBe(200);
          return ((await response.json()) as { choices: Array<{ message: { content: string } }> }).choices[0]
            .message.content;
        }),
      );
      // Whole answers compared: a prefix check would let req-1 pass with req-10's body.
      expect(answers).toEqual(contents.map((content) => `echo: ${content}`));
    });
  });
});

/**
 * The other direction: an OpenAI-compatible backend's ordinary content deltas are read from a template of the
 * last parsed one, not parsed each (providers/shared/delta-template.ts). The stand-in writes OpenAI's chunks,
 * `usage: null` and the `obfuscation` padding included, under another model name than the client's.
 */
describe('Streamed content deltas reach the client as the backend wrote them', () => {
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
          'slow-alias': { backend: 'standin', upstreamModel: 'slow' },
        },
      },
    });
    ({ token } = await gw.teamToken('deltas'));
  });
  afterAll(async () => {
    await gw.close();
    await upstream.stop();
  });

  const prompt = 'café "quoted" back\\slash </tag> 日本 😀 and a few more words to stream';
  const events = async (response: Response) =>
    (await response.text())
      .split('\n\n')
      .filter((event) => event.startsWith('data: {'))
      .map((event) => JSON.parse(event.slice('data: '.length)) as Record<string, any>);

  it("every chunk carries the client's model name and the backend's padding, and no usage member the client did not ask for", async () => {
    const response = await fetch(`${gw.url}/v1/chat/completions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'alias', stream: true, messages: [{ role: 'user', content: prompt }] }),
    });
    expect(response.status).toBe(200);
    const chunks = await events(response);
    expect(chunks.length).toBeGreaterThan(10);
    for (const chunk of chunks) {
      expect(chunk.model).toBe('alias');
      expect('usage' in chunk).toBe(false);
      expect(typeof chunk.obfuscation).toBe('string');
    }
    expect(chunks.map((chunk) => chunk.choices[0]?.delta?.content ?? '').join('')).toBe(`echo: ${prompt}`);
    expect(chunks[chunks.length - 1].choices[0].finish_reason).toBe('stop');
  });

  it('the OpenAI SDK reads the same stream with usage asked for, and the record has the backend’s counts', async () => {
    const { token: own } = await gw.teamToken('deltas-usage'); // its own team: the one record is this request's
    const stream = await gw.openai(own).chat.completions.create({
      model: 'alias',
      stream: true,
      stream_options: { include_usage: true },
      messages: [{ role: 'user', content: prompt }],
    });
    let text = '';
    let usage: { completion_tokens: number } | undefined | null;
    for await (const chunk of stream) {
      expect(chunk.model).toBe('alias');
      text += chunk.choices[0]?.delta?.content ?? '';
      if (chunk.usage) usage = chunk.usage;
    }
    expect(text).toBe(`echo: ${prompt}`);
    const words = `echo: ${prompt}`.split(/(?<= )/).length;
    expect(usage?.completion_tokens).toBe(words);
    const record = await waitForUsageRecord(gw, 'deltas-usage');
    expect(record).toMatchObject({
      stream: true,
      model: 'alias',
      outcome: 'ok',
      estimated: false,
      completion_tokens: words,
    });
  });

  it('a stream the client leaves after several deltas is billed from exactly the text it was sent', async () => {
    upstream.delayMs = 150;
    const { token: own } = await gw.teamToken('deltas-left');
    const controller = new AbortController();
    const stream = await gw
      .openai(own)
      .chat.completions.create(
        { model: 'slow-alias', stream: true, messages: [{ role: 'user', content: prompt }] },
        { signal: controller.signal },
      );
    let received = '';
    let deltas = 0;
    for await (const chunk of stream) {
      received += chunk.choices[0]?.delta?.content ?? '';
      if (chunk.choices[0]?.delta?.content && ++deltas === 6) break; // leaving the loop aborts the request
    }
    controller.abort();
    expect(received.length).toBeGreaterThan('echo: '.length);
    const record = await waitForUsageRecord(gw, 'deltas-left');
    // The estimate counts what was relayed: the five deltas after the first came from the template.
    expect(record).toMatchObject({
      model: 'slow-alias',
      outcome: 'aborted',
      estimated: true,
      completion_tokens: countTokens(received),
    });
  });
});
