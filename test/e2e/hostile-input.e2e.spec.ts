import { connect } from 'node:net';
import { brotliCompressSync, deflateSync, gzipSync } from 'node:zlib';
import { OpenAIUpstream } from '../support/openai-upstream';
import { startTestGateway, type TestGateway } from '../support/test-gateway';
import { waitForUsageRecord } from '../support/usage';

/** Bodies and requests built to break a parser: each is a 4xx in OpenAI's shape, never a 500 or a crash. */
function expectOpenAIError(body: any, code: string | null) {
  expect(body).toEqual({
    error: { message: expect.any(String), type: expect.any(String), param: null, code },
  });
}

/** Sends raw bytes and returns what came back (for requests Node itself refuses). */
function rawExchange(port: number, bytes: string): Promise<string> {
  return new Promise((resolve, reject) => {
    let answer = '';
    const socket = connect(port, '127.0.0.1', () => socket.write(bytes));
    socket.on('data', (d) => (answer += d));
    socket.on('error', reject);
    socket.on('close', () => resolve(answer));
  });
}

describe('hostile input', () => {
  let upstream: OpenAIUpstream;
  let gw: TestGateway;
  let token: string;
  const post = (body: string | Buffer, headers: Record<string, string>) =>
    fetch(`${gw.url}/v1/chat/completions`, { method: 'POST', headers, body });
  const json = { 'content-type': 'application/json' };

  beforeAll(async () => {
    upstream = await new OpenAIUpstream().start();
    gw = await startTestGateway({ upstreamUrl: upstream.url });
    ({ token } = await gw.teamToken('hostile'));
  });
  afterAll(async () => {
    await gw.close();
    await upstream.stop();
  });

  it('authenticates before reading the body: no token or a bad one is a 401 whatever the body is', async () => {
    for (const auth of [{}, { authorization: 'Bearer sy-0000000000000000-nope' }] as Array<
      Record<string, string>
    >) {
      for (const [body, headers] of [
        ['{"model": ', json],
        [Buffer.from('not gzip at all'), { ...json, 'content-encoding': 'gzip' }],
        ['model=x', { 'content-type': 'application/x-www-form-urlencoded' }],
      ] as const) {
        const response = await post(body, { ...headers, ...auth });
        expect(response.status).toBe(401);
        expectOpenAIError(await response.json(), 'invalid_api_key');
      }
    }
  });

  it('a gzip body that is not gzip is a 400, not a 500, and logs no error', async () => {
    const response = await post(Buffer.from('not gzip at all'), {
      ...json,
      'content-encoding': 'gzip',
      authorization: `Bearer ${token}`,
    });
    expect(response.status).toBe(400);
    expectOpenAIError(await response.json(), null);
    expect(gw.logs.filter((l) => (l.level as number) >= 50)).toEqual([]);
    // A real gzip body is read as usual.
    const good = gzipSync(JSON.stringify({ model: 'echo', messages: [{ role: 'user', content: 'zipped' }] }));
    const ok = await post(good, { ...json, 'content-encoding': 'gzip', authorization: `Bearer ${token}` });
    expect(ok.status).toBe(200);
    expect(((await ok.json()) as any).choices[0].message.content).toBe('echo: zipped');
  });

  it('compressed bodies and bodies in another charset are scanned like the others: UTF-16 is read, a charset JSON does not take is a 415, a zipped body of too many items a 413', async () => {
    const body = JSON.stringify({ model: 'echo', messages: [{ role: 'user', content: 'wide é' }] });
    const wide = await post(Buffer.from(body, 'utf16le'), {
      'content-type': 'application/json; charset=utf-16le',
      authorization: `Bearer ${token}`,
    });
    expect(wide.status).toBe(200);
    expect(((await wide.json()) as any).choices[0].message.content).toBe('echo: wide é');
    const latin = await post(Buffer.from(body, 'latin1'), {
      'content-type': 'application/json; charset=iso-8859-1',
      authorization: `Bearer ${token}`,
    });
    expect(latin.status).toBe(415);
    expectOpenAIError(await latin.json(), 'unsupported_media_type');
    const many = gzipSync(
      `{"model":"echo","messages":[${'{"role":"user","content":"a"},'.repeat(40_000)}{"role":"user","content":"a"}]}`,
    );
    const refused = await post(many, {
      ...json,
      'content-encoding': 'gzip',
      authorization: `Bearer ${token}`,
    });
    expect(refused.status).toBe(413);
    expectOpenAIError(await refused.json(), 'request_too_large');
  });

  it('compressed bodies are inflated as they arrive: deflate and br are read, a zip bomb past server.maxBodyBytes is a 413, a cut gzip stream a 400', async () => {
    const body = JSON.stringify({ model: 'echo', messages: [{ role: 'user', content: 'squeezed' }] });
    for (const [encoding, bytes] of [
      ['deflate', deflateSync(body)],
      ['br', brotliCompressSync(body)],
      ['GZIP', gzipSync(body)], // encodings are case-insensitive, as body-parser reads them
    ] as const) {
      const response = await post(bytes, {
        ...json,
        'content-encoding': encoding,
        authorization: `Bearer ${token}`,
      });
      expect(response.status).toBe(200);
      expect(((await response.json()) as any).choices[0].message.content).toBe('echo: squeezed');
    }
    // 21 MB of spaces inside a valid body: ~20 KB on the wire, over the 20 MiB default once inflated.
    const bomb = gzipSync(
      `{"model":"echo","messages":[{"role":"user","content":"a"}]${' '.repeat(21 * 1024 * 1024)}}`,
    );
    expect(bomb.length).toBeLessThan(100_000);
    const refused = await post(bomb, {
      ...json,
      'content-encoding': 'gzip',
      authorization: `Bearer ${token}`,
    });
    expect(refused.status).toBe(413);
    expectOpenAIError(await refused.json(), 'request_too_large');
    const zipped = gzipSync(body);
    const cut = await post(zipped.subarray(0, zipped.length - 12), {
      ...json,
      'content-encoding': 'gzip',
      authorization: `Bearer ${token}`,
    });
    expect(cut.status).toBe(400);
    expectOpenAIError(await cut.json(), null);
    expect(gw.logs.filter((l) => (l.level as number) >= 50)).toEqual([]);
    expect((await fetch(`${gw.url}/health/live`)).status).toBe(200);
  });

  it.each([
    ['300 nested arrays', `{"model":"echo","messages":${'['.repeat(300)}${']'.repeat(300)}}`],
    ['1,500 nested arrays', `{"model":"echo","messages":${'['.repeat(1500)}${']'.repeat(1500)}}`],
    [
      '5,000 nested objects',
      `{"model":"echo","messages":[{"role":"user","content":"x","extra":${'{"a":'.repeat(5000)}1${'}'.repeat(5000)}}]}`,
    ],
  ])('%s: 400 invalid_json, and the gateway keeps answering', async (_what, body) => {
    const response = await post(body, { ...json, authorization: `Bearer ${token}` });
    expect(response.status).toBe(400);
    expectOpenAIError(await response.json(), 'invalid_json');
    expect((await fetch(`${gw.url}/health/live`)).status).toBe(200);
  });

  it('a JSON schema nested a few dozen levels (response_format, tools) is still accepted', async () => {
    let schema: Record<string, unknown> = { type: 'string' };
    for (let i = 0; i < 40; i++) schema = { type: 'object', properties: { child: schema } };
    const response = await post(
      JSON.stringify({
        model: 'echo',
        messages: [{ role: 'user', content: 'deep' }],
        response_format: { type: 'json_schema', json_schema: { name: 'deep', schema } },
      }),
      {
        ...json,
        authorization: `Bearer ${token}`,
      },
    );
    expect(response.status).toBe(200);
  });

  it('a 200 KB message of one letter from a team with token limits never stalls the gateway (admission, abort estimate)', async () => {
    const { token: limited } = await gw.teamToken('one-letter');
    await gw.admin('PATCH', '/admin/v1/teams/one-letter', { limits: { tokensPerDay: 10_000_000 } });
    let worstHealthMs = 0;
    let polling = true;
    const poll = (async () => {
      while (polling) {
        const started = Date.now();
        await fetch(`${gw.url}/health/live`);
        worstHealthMs = Math.max(worstHealthMs, Date.now() - started);
        await new Promise((r) => setTimeout(r, 5));
      }
    })();
    const content = 'a'.repeat(200_000);
    const controller = new AbortController();
    const stream = await gw
      .openai(limited)
      .chat.completions.create(
        { model: 'hang', stream: true, messages: [{ role: 'user', content }] },
        { signal: controller.signal },
      );
    controller.abort(); // no usage will come: the gateway counts the prompt itself
    await (async () => {
      for await (const chunk of stream) void chunk;
    })().catch(() => undefined);
    const record = await waitForUsageRecord(gw, 'one-letter', { timeoutMs: 20_000 });
    polling = false;
    await poll;
    expect(record).toMatchObject({ outcome: 'aborted', estimated: true });
    expect(record.prompt_tokens).toBeGreaterThan(200_000 / 256);
    // Before: the tokenizer ran on the event loop, quadratic in the run, and health waited 28 s. 5 s tells the two
    // apart and holds on a loaded 2-core machine, where a health check alone can take a second.
    expect(worstHealthMs).toBeLessThan(5000);
  });

  it('headers over Node’s limit get a 431 and a malformed request line a 400, both in OpenAI’s shape', async () => {
    const port = Number(new URL(gw.url).port);
    const big = await rawExchange(
      port,
      `GET /health/live HTTP/1.1\r\nHost: x\r\nX-Big: ${'a'.repeat(100_000)}\r\n\r\n`,
    );
    expect(big).toMatch(/^HTTP\/1\.1 431 /);
    expectOpenAIError(JSON.parse(big.slice(big.indexOf('\r\n\r\n') + 4)), 'request_header_too_large');
    const garbage = await rawExchange(port, 'THIS IS NOT HTTP\r\n\r\n');
    expect(garbage).toMatch(/^HTTP\/1\.1 400 /);
    expectOpenAIError(JSON.parse(garbage.slice(garbage.indexOf('\r\n\r\n') + 4)), null);
  });
});
