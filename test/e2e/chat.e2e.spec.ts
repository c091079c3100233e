import OpenAI from 'openai';
import { OpenAIUpstream } from '../support/openai-upstream';
import { startTestGateway, type TestGateway } from '../support/test-gateway';
import { waitForUsageSummary } from '../support/usage';

describe('POST /v1/chat/completions (relay)', () => {
  let upstream: OpenAIUpstream;
  let gw: TestGateway;
  let token: string;
  let tokenId: string;

  beforeAll(async () => {
    upstream = await new OpenAIUpstream().start();
    gw = await startTestGateway({ upstreamUrl: upstream.url });
    ({ token, id: tokenId } = await gw.teamToken('research'));
  });
  afterAll(async () => {
    await gw.close();
    await upstream.stop();
  });

  it('answers a non-streaming call in the OpenAI shape, under the model name the client asked for', async () => {
    const { data: reply, response } = await gw
      .openai(token)
      .chat.completions.create({
        model: 'echo',
        messages: [
          { role: 'system', content: 'be brief' },
          { role: 'user', content: 'hello world' },
        ],
      })
      .withResponse();
    expect(response.headers.get('content-type')).toMatch(/^application\/json/);
    expect(response.headers.get('x-request-id')).toMatch(/^[0-9a-f-]{36}$/);
    expect(reply.object).toBe('chat.completion');
    expect(reply.id).toEqual(expect.any(String));
    expect(Number.isInteger(reply.created)).toBe(true);
    expect(Math.abs(reply.created - Date.now() / 1000)).toBeLessThan(60); // seconds, not ms
    expect(reply.model).toBe('echo');
    expect(reply.choices).toEqual([
      expect.objectContaining({
        index: 0,
        message: expect.objectContaining({ role: 'assistant', content: 'echo: hello world' }),
        finish_reason: 'stop',
      }),
    ]);
    // The stand-in's words: "be brief" and "hello world" in, "echo: hello world" out.
    expect(reply.usage).toEqual({ prompt_tokens: 4, completion_tokens: 3, total_tokens: 7 });
  });

  it('sends the upstream model name and the backend key, never the client token or forwarded headers', async () => {
    await fetch(`${gw.url}/v1/chat/completions`, {
      method: 'POST',
      headers: {
        authorization: `Bearer ${token}`,
        'content-type': 'application/json',
        accept: 'application/json',
        'x-forwarded-host': 'client.example.com',
        'x-forwarded-for': '203.0.113.9',
        'x-forwarded-proto': 'https',
        cookie: 'session=abc',
      },
      body: JSON.stringify({ model: 'echo', messages: [{ role: 'user', content: 'hi' }] }),
    });
    const seen = upstream.last();
    expect(seen.body.model).toBe('echo');
    expect(seen.headers.authorization).toBe('Bearer upstream-secret-key');
    const forwarded = Object.keys(seen.headers).filter(
      (h) => h.startsWith('x-forwarded') || h === 'forwarded' || h === 'cookie',
    );
    expect(forwarded).toEqual([]);
    expect(JSON.stringify(seen.headers)).not.toContain(token);
  });

  it('passes OpenAI fields it does not know through to an OpenAI-compatible backend unchanged', async () => {
    const tools = [
      { type: 'function', function: { name: 'get_weather', parameters: { type: 'object', properties: {} } } },
    ];
    await gw.openai(token).chat.completions.create({
      model: 'echo',
      messages: [{ role: 'user', content: 'weather?' }],
      tools: tools as never,
      tool_choice: 'auto',
      response_format: { type: 'text' },
      seed: 42,
      user: 'u-1',
      temperature: 0.5,
      max_tokens: 50,
    });
    const body = upstream.last().body;
    expect(body).toMatchObject({
      tools,
      tool_choice: 'auto',
      response_format: { type: 'text' },
      seed: 42,
      user: 'u-1',
      temperature: 0.5,
      max_tokens: 50,
    });
    expect(body).not.toHaveProperty('stream');
    expect(body).not.toHaveProperty('thinking');
  });

  it('accepts thinking: disabled and does not forward it', async () => {
    await gw.openai(token).chat.completions.create({
      model: 'echo',
      messages: [{ role: 'user', content: 'x' }],
      thinking: { type: 'disabled' },
    } as never);
    expect(upstream.last().body).not.toHaveProperty('thinking');
  });

  it('maps a truncated answer to finish_reason "length"', async () => {
    const reply = await gw.openai(token).chat.completions.create({
      model: 'echo',
      max_tokens: 2,
      messages: [{ role: 'user', content: 'one two three four' }],
    });
    expect(reply.choices[0].finish_reason).toBe('length');
    expect(reply.usage!.completion_tokens).toBe(2);
  });

  it('streams OpenAI chunks ending in [DONE], without a usage chunk when the client did not ask', async () => {
    const response = await fetch(`${gw.url}/v1/chat/completions`, {
      method: 'POST',
      // The official SDK sends Accept: application/json even when streaming.
      headers: {
        authorization: `Bearer ${token}`,
        'content-type': 'application/json',
        accept: 'application/json',
      },
      body: JSON.stringify({ model: 'echo', stream: true, messages: [{ role: 'user', content: 'a b c' }] }),
    });
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toMatch(/^text\/event-stream/);
    const text = await response.text();
    const events = text.split('\n\n').filter(Boolean);
    expect(events[events.length - 1]).toBe('data: [DONE]');
    const chunks = events.slice(0, -1).map((e) => JSON.parse(e.replace(/^data: /, '')));
    expect(chunks[0].choices[0].delta.role).toBe('assistant');
    for (const chunk of chunks) {
      expect(chunk.object).toBe('chat.completion.chunk');
      expect(chunk.model).toBe('echo');
      expect(chunk).not.toHaveProperty('usage');
      expect(chunk.choices.length).toBe(1);
    }
    expect(chunks.map((c) => c.choices[0].delta.content ?? '').join('')).toBe('echo: a b c');
    expect(chunks[chunks.length - 1].choices[0].finish_reason).toBe('stop');
    // ...while the upstream was asked for usage, so the gateway can account the stream.
    expect(upstream.last().body.stream_options).toEqual({ include_usage: true });
  });

  it('streams the final usage chunk (choices: []) when the client asked for it, through the openai SDK', async () => {
    const stream = await gw.openai(token).chat.completions.create({
      model: 'echo',
      stream: true,
      stream_options: { include_usage: true },
      messages: [{ role: 'user', content: 'count these words' }],
    });
    const chunks = [];
    for await (const chunk of stream) chunks.push(chunk);
    const last = chunks[chunks.length - 1];
    expect(last.choices).toEqual([]);
    expect(last.usage).toEqual({ prompt_tokens: 3, completion_tokens: 4, total_tokens: 7 });
    expect(chunks.slice(0, -1).every((c) => c.usage === null)).toBe(true);
    expect(chunks.map((c) => c.choices[0]?.delta.content ?? '').join('')).toBe('echo: count these words');
  });

  it('every response carries Server-Timing with the gateway time and, once a backend was called, the upstream time', async () => {
    const timing = /^gateway;dur=(\d+\.\d{2}), upstream;dur=(\d+\.\d{2})$/;
    const plain = await fetch(`${gw.url}/v1/chat/completions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'slow', messages: [{ role: 'user', content: 'a b' }] }),
    });
    await plain.text();
    const [, gateway, upstreamMs] = timing.exec(plain.headers.get('server-timing') ?? '')!.map(Number);
    expect(upstreamMs).toBeGreaterThan(0);
    expect(gateway).toBeGreaterThan(0);
    const streamed = await fetch(`${gw.url}/v1/chat/completions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'echo', stream: true, messages: [{ role: 'user', content: 'a b' }] }),
    });
    await streamed.text();
    expect(streamed.headers.get('server-timing')).toMatch(timing);
    const refused = await fetch(`${gw.url}/v1/chat/completions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
      body: '{"model":"nope","messages":[{"role":"user","content":"x"}]}',
    });
    expect(refused.status).toBe(404);
    expect(refused.headers.get('server-timing')).toMatch(/^gateway;dur=\d+\.\d{2}$/);
  });

  it('relays the first chunk before the upstream has finished (no buffering)', async () => {
    upstream.delayMs = 400;
    const started = Date.now();
    const stream = await gw.openai(token).chat.completions.create({
      model: 'slow',
      stream: true,
      messages: [{ role: 'user', content: 'w1 w2 w3' }],
    });
    let firstAt = 0;
    for await (const chunk of stream)
      if (!firstAt && chunk.choices[0]?.delta.role) firstAt = Date.now() - started;
    const total = Date.now() - started;
    upstream.delayMs = 50;
    expect(total).toBeGreaterThan(1200); // 4 words x 400 ms
    // The first chunk came while the upstream still had words to send: relayed, it arrives the stand-in's four
    // 400 ms waits before the end (buffered, at the end); 800 ms is half of that. Measured against the stream's own
    // end rather than a fixed bound from the start, so a loaded machine that slows both does not matter.
    expect(total - firstAt).toBeGreaterThan(800);
  });

  it('sends the stream headers at once while the upstream has not produced a first event', async () => {
    const started = Date.now();
    const controller = new AbortController();
    const res = await fetch(`${gw.url}/v1/chat/completions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'hang', stream: true, messages: [{ role: 'user', content: 'a' }] }),
      signal: controller.signal,
    });
    const headersAfter = Date.now() - started;
    controller.abort();
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('text/event-stream; charset=utf-8');
    // The upstream never sends an event, so without the gateway sending its headers at once none would ever come:
    // any bound is decisive, and 10 s holds on a loaded machine (speed itself is for bench/).
    expect(headersAfter).toBeLessThan(10_000);
  });

  it('lists only the models the team may use', async () => {
    const narrow = await gw.teamToken('narrow', ['echo', 'status-*']);
    const all = await gw.openai(token).models.list();
    const some = await gw.openai(narrow.token).models.list();
    expect(all.data.map((m) => m.id)).toContain('slow');
    expect(some.data.map((m) => m.id).sort()).toEqual([
      'echo',
      'status-400',
      'status-401',
      'status-404',
      'status-429',
      'status-500',
      'status-503',
    ]);
    expect(some.data[0]).toEqual(
      expect.objectContaining({ object: 'model', owned_by: 'standin', created: expect.any(Number) }),
    );
  });

  it("retrieves one model the token may use; any other is a 404 in OpenAI's shape, whether it exists or not", async () => {
    const narrow = await gw.teamToken('narrow-retrieve', ['echo']);
    const listed = (await gw.openai(narrow.token).models.list()).data[0];
    expect(await gw.openai(narrow.token).models.retrieve('echo')).toEqual(listed);
    for (const model of ['slow', 'no-such-model']) {
      const error = await gw
        .openai(narrow.token)
        .models.retrieve(model)
        .catch((e: unknown) => e);
      expect(error).toBeInstanceOf(OpenAI.NotFoundError);
      expect((error as InstanceType<typeof OpenAI.NotFoundError>).error).toEqual({
        message: `The model \`${model}\` does not exist or you do not have access to it.`,
        type: 'invalid_request_error',
        param: 'model',
        code: 'model_not_found',
      });
    }
    const document = (await (await fetch(`${gw.url}/openapi.json`)).json()) as any;
    expect(document.paths['/v1/models/{model}'].get).toBeDefined();
  });

  it('accounts usage per team in Redis (read back through the usage API), and logs one access line per request', async () => {
    const { token: t } = await gw.teamToken('accounting');
    const client = gw.openai(t);
    await client.chat.completions.create({ model: 'echo', messages: [{ role: 'user', content: 'one two' }] });
    const s = await client.chat.completions.create({
      model: 'echo',
      stream: true,
      messages: [{ role: 'user', content: 'three' }],
    });
    for await (const _ of s) void _;
    // prompt: "one two" = 2 words, "three" = 1; completion: "echo: one two" = 3, "echo: three" = 2
    const usage = await waitForUsageSummary(gw, 'team=accounting&groupBy=model', 2);
    expect(usage.data).toEqual([
      expect.objectContaining({
        team: 'accounting',
        model: 'echo',
        requests: 2,
        requests_ok: 2,
        prompt_tokens: 3,
        completion_tokens: 5,
        total_tokens: 8,
        estimated_requests: 0,
      }),
    ]);
    const access = gw.logs.filter(
      (l) => l.type === 'access' && l.team === 'accounting' && l.path === '/v1/chat/completions',
    );
    expect(access).toHaveLength(2);
    expect(access[1]).toMatchObject({
      status: 200,
      model: 'echo',
      backend: 'standin',
      stream: true,
      tokens: { prompt: 1, completion: 2, estimated: false },
    });
    expect(access[0].requestId).toEqual(expect.any(String));
    expect(access[0].tokenId).toEqual(expect.any(String));
    void tokenId;
  });
});
