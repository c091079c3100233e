import { once } from 'node:events';
import type { Server } from 'node:http';
import { connect } from 'node:net';
import { Readable } from 'node:stream';
import OpenAI from 'openai';
import { request as undiciRequest } from 'undici';
import { OpenAIUpstream } from '../support/openai-upstream';
import { startTestGateway, type TestGateway } from '../support/test-gateway';

/** Every error the gateway gives is OpenAI's body with the documented status. */
function expectOpenAIError(body: any, code: string | null, param: string | null = null) {
  expect(body).toEqual({ error: { message: expect.any(String), type: expect.any(String), param, code } });
}

describe('errors', () => {
  let upstream: OpenAIUpstream;
  let gw: TestGateway;
  let token: string;

  const post = (body: unknown, headers: Record<string, string> = {}) =>
    fetch(`${gw.url}/v1/chat/completions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json', ...headers },
      body: typeof body === 'string' ? body : JSON.stringify(body),
    });

  beforeAll(async () => {
    upstream = await new OpenAIUpstream().start();
    gw = await startTestGateway({
      upstreamUrl: upstream.url,
      config: {
        server: { maxBodyBytes: 2048 },
        backends: {
          standin: { timeouts: { firstByteMs: 400, idleMs: 400 } },
          down: { type: 'openai', baseUrl: 'http://127.0.0.1:9/v1' },
          keyless: {
            type: 'anthropic',
            baseUrl: 'http://127.0.0.1:9/v1',
            apiKey: '${KEYLESS_ANTHROPIC_KEY:-}',
          },
        },
        models: {
          'unreachable-model': { backend: 'down', upstreamModel: 'x' },
          'keyless-claude': { backend: 'keyless', upstreamModel: 'claude-x' },
        },
      },
    });
    ({ token } = await gw.teamToken('errors'));
  });
  afterAll(async () => {
    await gw.close();
    await upstream.stop();
  });

  describe('authentication', () => {
    it.each([
      ['missing', undefined],
      ['not Bearer', 'Basic abc'],
      ['malformed', 'Bearer not-a-token'],
      ['unknown', 'Bearer sy-0123456789abcdef-AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA'],
    ])('401 invalid_api_key for a %s token', async (_what, authorization) => {
      const response = await fetch(`${gw.url}/v1/chat/completions`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', ...(authorization ? { authorization } : {}) },
        body: JSON.stringify({ model: 'echo', messages: [{ role: 'user', content: 'x' }] }),
      });
      expect(response.status).toBe(401);
      const body: any = await response.json();
      expectOpenAIError(body, 'invalid_api_key');
      expect(body.error.type).toBe('invalid_request_error');
    });

    it('401 for a real token with a wrong secret (same id)', async () => {
      const forged = token.slice(0, -4) + (token.endsWith('AAAA') ? 'BBBB' : 'AAAA');
      const error = await gw
        .openai(forged)
        .models.list()
        .catch((e) => e);
      expect(error).toBeInstanceOf(OpenAI.AuthenticationError);
    });

    it('GET /v1/models needs a token too (deny by default)', async () => {
      expect((await fetch(`${gw.url}/v1/models`)).status).toBe(401);
    });

    it('the admin API refuses team tokens', async () => {
      const response = await fetch(`${gw.url}/admin/v1/teams`, {
        headers: { authorization: `Bearer ${token}` },
      });
      expect(response.status).toBe(401);
      expectOpenAIError(await response.json(), 'invalid_api_key');
    });
  });

  it('403 model_not_allowed when the team may not use the model', async () => {
    const narrow = await gw.teamToken('only-echo', ['echo']);
    const error = await gw
      .openai(narrow.token)
      .chat.completions.create({ model: 'slow', messages: [{ role: 'user', content: 'x' }] })
      .catch((e) => e);
    expect(error).toBeInstanceOf(OpenAI.PermissionDeniedError);
    expect(error.code).toBe('model_not_allowed');
    expect(error.param).toBe('model');
  });

  it('404 model_not_found for a model nobody configured', async () => {
    const error = await gw
      .openai(token)
      .chat.completions.create({ model: 'gpt-9', messages: [{ role: 'user', content: 'x' }] })
      .catch((e) => e);
    expect(error).toBeInstanceOf(OpenAI.NotFoundError);
    expect(error.code).toBe('model_not_found');
  });

  describe('validation: 400 naming the param', () => {
    const ok = { model: 'echo', messages: [{ role: 'user', content: 'x' }] };
    it.each<[string, Record<string, unknown>, string]>([
      ['model missing', { messages: ok.messages }, 'model'],
      ['model not a string', { ...ok, model: 3 }, 'model'],
      ['messages missing', { model: 'echo' }, 'messages'],
      ['messages empty', { ...ok, messages: [] }, 'messages'],
      ['bad role', { ...ok, messages: [{ role: 'robot', content: 'x' }] }, 'messages[0].role'],
      ['content a number', { ...ok, messages: [{ role: 'user', content: 5 }] }, 'messages[0].content'],
      [
        'content null for user',
        { ...ok, messages: [{ role: 'user', content: null }] },
        'messages[0].content',
      ],
      [
        'text part without text',
        { ...ok, messages: [{ role: 'user', content: [{ type: 'text' }] }] },
        'messages[0].content',
      ],
      [
        'image part in a system message',
        {
          ...ok,
          messages: [
            { role: 'system', content: [{ type: 'image_url', image_url: { url: 'https://x/y.png' } }] },
          ],
        },
        'messages[0].content',
      ],
      [
        'tool message without tool_call_id',
        { ...ok, messages: [{ role: 'tool', content: 'r' }] },
        'messages[0].tool_call_id',
      ],
      ['max_tokens 0', { ...ok, max_tokens: 0 }, 'max_tokens'],
      ['max_tokens fractional', { ...ok, max_tokens: 1.5 }, 'max_tokens'],
      ['max_tokens a string', { ...ok, max_tokens: '10' }, 'max_tokens'],
      ['max_completion_tokens negative', { ...ok, max_completion_tokens: -1 }, 'max_completion_tokens'],
      ['temperature 2.5', { ...ok, temperature: 2.5 }, 'temperature'],
      ['top_p 1.5', { ...ok, top_p: 1.5 }, 'top_p'],
      ['n 0', { ...ok, n: 0 }, 'n'],
      ['stop with 5 sequences', { ...ok, stop: ['a', 'b', 'c', 'd', 'e'] }, 'stop'],
      ['stream not a boolean', { ...ok, stream: 'yes' }, 'stream'],
      ['stream_options without stream', { ...ok, stream_options: { include_usage: true } }, 'stream_options'],
      [
        'include_usage not a boolean',
        { ...ok, stream: true, stream_options: { include_usage: 'y' } },
        'stream_options.include_usage',
      ],
      ['thinking with a bad type', { ...ok, thinking: { type: 'maybe' } }, 'thinking.type'],
      ['thinking enabled without budget', { ...ok, thinking: { type: 'enabled' } }, 'thinking.budget_tokens'],
      [
        'thinking budget 0',
        { ...ok, thinking: { type: 'enabled', budget_tokens: 0 } },
        'thinking.budget_tokens',
      ],
      [
        'thinking budget >= max_tokens',
        { ...ok, max_tokens: 100, thinking: { type: 'enabled', budget_tokens: 100 } },
        'thinking',
      ],
      [
        'thinking on a model that cannot reason',
        { ...ok, thinking: { type: 'enabled', budget_tokens: 10 } },
        'thinking',
      ],
    ])('%s', async (_name, body, param) => {
      const response = await post(body);
      expect(response.status).toBe(400);
      const error: any = await response.json();
      expectOpenAIError(error, null, param);
      expect(error.error.type).toBe('invalid_request_error');
      expect(error.error.message).toContain(param.split(/[.[]/)[0]);
    });

    it.each([
      [{ ...ok, max_tokens: '10' }, "Invalid 'max_tokens': must be an integer number."],
      [{ ...ok, n: 'two' }, "Invalid 'n': must be an integer number."],
      [
        { ...ok, temperature: 'hot' },
        "Invalid 'temperature': must be a number conforming to the specified constraints.",
      ],
      [{ ...ok, messages: [] }, "Invalid 'messages': must contain at least one message."],
    ])('says what is wrong in plain words: %j', async (body, message) => {
      expect(((await (await post(body)).json()) as any).error.message).toBe(message);
    });

    it('checks a thinking budget against the limit the backend will get (max_completion_tokens wins, as in the adapters)', async () => {
      const thinking = { type: 'enabled', budget_tokens: 100 };
      // Accepted by the DTO (max_completion_tokens 200 is what the backend gets); refused only as the stand-in cannot think.
      const both = (await (
        await post({ ...ok, max_tokens: 50, max_completion_tokens: 200, thinking })
      ).json()) as any;
      expect(both.error.message).toMatch(/does not support extended reasoning/);
      const refused = (await (
        await post({ ...ok, max_tokens: 500, max_completion_tokens: 100, thinking })
      ).json()) as any;
      expect(refused.error.message).toMatch(/must be smaller than max_completion_tokens \(100\)/);
    });

    it('accepts null for optional fields and assistant content null with tool_calls', async () => {
      const response = await post({
        ...ok,
        max_tokens: null,
        temperature: null,
        stop: null,
        messages: [
          { role: 'user', content: 'x' },
          {
            role: 'assistant',
            content: null,
            tool_calls: [{ id: 'c1', type: 'function', function: { name: 'f', arguments: '{}' } }],
          },
          { role: 'tool', tool_call_id: 'c1', content: [{ type: 'text', text: 'result' }] },
          { role: 'developer', content: 'be nice' },
          {
            role: 'user',
            content: [
              { type: 'text', text: 'look' },
              { type: 'image_url', image_url: { url: 'data:image/png;base64,AAAA' } },
            ],
          },
        ],
      });
      expect(response.status).toBe(200);
    });

    it('400 invalid_json for a body that does not parse', async () => {
      const response = await post('{"model": "echo", ');
      expect(response.status).toBe(400);
      expectOpenAIError(await response.json(), 'invalid_json');
    });

    it('400 when the body is JSON but not an object', async () => {
      const response = await post('[1,2]');
      expect(response.status).toBe(400);
      expectOpenAIError(await response.json(), null);
    });

    it('413 for a body over server.maxBodyBytes', async () => {
      const response = await post({ ...ok, messages: [{ role: 'user', content: 'x'.repeat(5000) }] });
      expect(response.status).toBe(413);
      expectOpenAIError(await response.json(), 'request_too_large');
    });

    it('413 for a chunked body (no Content-Length) that grows past server.maxBodyBytes as it is read', async () => {
      const chunks = Readable.from([
        JSON.stringify({ ...ok, messages: [{ role: 'user', content: 'x'.repeat(1000) }] }).slice(0, -2),
        'y'.repeat(3000),
        '"}]}',
      ]);
      const response = await undiciRequest(`${gw.url}/v1/chat/completions`, {
        method: 'POST',
        headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
        body: chunks,
      });
      expect(response.statusCode).toBe(413);
      expectOpenAIError(await response.body.json(), 'request_too_large');
    });

    it('a UTF-8 byte order mark before the JSON is ignored, as body-parser does', async () => {
      const response = await post(`\uFEFF${JSON.stringify(ok)}`, {
        'content-type': 'application/json; charset=utf-8',
      });
      expect(response.status).toBe(200);
    });

    it('a client that stops sending half-way through its body costs nothing: no error logged, the gateway keeps answering', async () => {
      const errorsBefore = gw.logs.filter((l) => (l.level as number) >= 50).length;
      const socket = connect(Number(new URL(gw.url).port), '127.0.0.1');
      await once(socket, 'connect');
      // The gateway has parsed the request's head (and is waiting for the rest of its body) before the client goes.
      const arrived = once(gw.gateway.app.getHttpServer() as Server, 'request');
      socket.write(
        `POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${token}\r\nContent-Type: application/json\r\nContent-Length: 1000\r\n\r\n{"model":"echo",`,
      );
      await arrived;
      socket.destroy();
      await once(socket, 'close');
      expect((await post(ok)).status).toBe(200);
      expect(gw.logs.filter((l) => (l.level as number) >= 50)).toHaveLength(errorsBefore);
    });

    it('415 for a body that is not JSON', async () => {
      const response = await post('model=echo', { 'content-type': 'application/x-www-form-urlencoded' });
      expect(response.status).toBe(415);
      expectOpenAIError(await response.json(), 'unsupported_media_type');
    });

    it('404 in the OpenAI shape for an unknown route', async () => {
      const response = await fetch(`${gw.url}/v1/nothing-here`, {
        headers: { authorization: `Bearer ${token}` },
      });
      expect(response.status).toBe(404);
      expectOpenAIError(await response.json(), 'not_found');
    });
  });

  describe('upstream failures', () => {
    const call = (model: string) =>
      gw
        .openai(token)
        .chat.completions.create({ model, messages: [{ role: 'user', content: 'x' }] })
        .catch((e) => e);

    it('upstream 429 -> 429 with its Retry-After', async () => {
      const response = await post({ model: 'status-429', messages: [{ role: 'user', content: 'x' }] });
      expect(response.status).toBe(429);
      expect(response.headers.get('retry-after')).toBe('7');
      const body: any = await response.json();
      expectOpenAIError(body, 'rate_limit_exceeded');
      expect(body.error.type).toBe('requests');
      expect(await call('status-429')).toBeInstanceOf(OpenAI.RateLimitError);
    });

    it("upstream 400 passes through with the vendor's code", async () => {
      const error = await call('status-400');
      expect(error).toBeInstanceOf(OpenAI.BadRequestError);
      expect(error.code).toBe('context_length_exceeded');
    });

    it.each([
      ['status-401', 502, 'upstream_auth_failed'],
      ['status-404', 502, 'upstream_error'],
      ['status-500', 502, 'upstream_error'],
      ['status-503', 503, 'upstream_unavailable'],
      ['unreachable-model', 502, 'upstream_unreachable'],
      ['hang', 504, 'upstream_timeout'],
    ])('%s -> %i %s', async (model, status, code) => {
      const response = await post({ model, messages: [{ role: 'user', content: 'x' }] });
      expect(response.status).toBe(status);
      const body: any = await response.json();
      expectOpenAIError(body, code);
      expect(JSON.stringify(body)).not.toMatch(/upstream-secret-key|at .*\.ts:\d+/);
    });

    it('never leaks the upstream key an upstream echoes back', async () => {
      const response = await post({ model: 'leak-key', messages: [{ role: 'user', content: 'x' }] });
      expect(response.status).toBe(400);
      const text = await response.text();
      expect(text).not.toContain('upstream-secret-key');
      expect(text).toContain('[redacted]');
    });

    it('a reply that is not JSON is upstream_error (the backend was reached), not upstream_unreachable', async () => {
      const response = await post({ model: 'malformed', messages: [{ role: 'user', content: 'x' }] });
      expect(response.status).toBe(502);
      const body: any = await response.json();
      expectOpenAIError(body, 'upstream_error');
      expect(body.error.message).toMatch(/malformed reply/);
    });

    it('a stream cut mid-way ends with upstream_error, not upstream_unreachable', async () => {
      const response = await post({
        model: 'cut',
        stream: true,
        messages: [{ role: 'user', content: 'a b c' }],
      });
      const events = (await response.text()).split('\n\n').filter(Boolean);
      expectOpenAIError(JSON.parse(events[events.length - 1].replace(/^data: /, '')), 'upstream_error');
    });

    it('a model whose backend has no API key is not listed, and says so with a 403 no client retries instead of "could not be reached"', async () => {
      const listed = (await gw.asTeam(token, 'GET', '/v1/models')).body.data.map((m: any) => m.id);
      expect(listed).toContain('echo');
      expect(listed).not.toContain('keyless-claude');
      const response = await post({ model: 'keyless-claude', messages: [{ role: 'user', content: 'x' }] });
      expect(response.status).toBe(403);
      const body: any = await response.json();
      expectOpenAIError(body, 'model_unavailable', 'model');
      expect(body.error.message).toBe(
        'The model `keyless-claude` is not available: backend "keyless" has no API key configured (the gateway\'s operator must set KEYLESS_ANTHROPIC_KEY).',
      );
      expect(gw.logs.some((l) => l.backend === 'keyless' && String(l.msg).includes('no API key'))).toBe(true);
    });

    it('an upstream failure before the first byte of a stream is a normal HTTP error', async () => {
      const error = await gw
        .openai(token)
        .chat.completions.create({
          model: 'status-500',
          stream: true,
          messages: [{ role: 'user', content: 'x' }],
        })
        .catch((e) => e);
      expect(error).toBeInstanceOf(OpenAI.InternalServerError);
      expect(error.status).toBe(502);
    });

    it.each([
      ['midstream-error', 'an in-band upstream error event'],
      ['cut', 'the upstream connection dropping'],
      ['hang', 'the upstream going silent past idleMs'],
    ])('%s: %s ends the stream with a data: {"error"} event the SDK throws', async (model) => {
      const stream = await gw
        .openai(token)
        .chat.completions.create({ model, stream: true, messages: [{ role: 'user', content: 'a b c d' }] });
      const received: string[] = [];
      const error = await (async () => {
        for await (const chunk of stream) received.push(chunk.choices[0]?.delta.content ?? '');
      })().catch((e) => e);
      expect(error).toBeInstanceOf(OpenAI.APIError);
      expect(error.status).toBeUndefined(); // in-band: the HTTP status was already 200
      expect(error.error).toEqual({
        message: expect.any(String),
        type: 'server_error',
        param: null,
        code: expect.any(String),
      });
      if (model !== 'hang') expect(received.join('')).toBe('echo: a ');
    });

    it('the raw wire form of an in-stream error: error event, no [DONE]', async () => {
      const response = await post({
        model: 'midstream-error',
        stream: true,
        messages: [{ role: 'user', content: 'a b c' }],
      });
      const events = (await response.text()).split('\n\n').filter(Boolean);
      const last = JSON.parse(events[events.length - 1].replace(/^data: /, ''));
      expectOpenAIError(last, 'upstream_error');
      expect(events).not.toContain('data: [DONE]');
    });
  });
});
