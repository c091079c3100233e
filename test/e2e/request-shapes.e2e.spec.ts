import { OpenAIUpstream } from '../support/openai-upstream';
import { startTestGateway, type TestGateway } from '../support/test-gateway';

/**
 * Every endpoint checks the shape of every message, item and block before anything is translated or forwarded
 * (issue 32: `{"messages":[[]]}` was a 500 on /v1/messages and count_tokens and was forwarded by chat completions),
 * and the vendors' own per-request limits hold, each refusal a 400 in the API's own error shape.
 */
describe('request shapes and per-request item limits', () => {
  let upstream: OpenAIUpstream;
  let gw: TestGateway;
  let token: string;

  beforeAll(async () => {
    upstream = await new OpenAIUpstream().start();
    gw = await startTestGateway({
      upstreamUrl: upstream.url,
      config: { models: { embed: { backend: 'standin', upstreamModel: 'embed', kind: 'embedding' } } },
    });
    ({ token } = await gw.teamToken('shapes'));
  });
  afterAll(async () => {
    await gw.close();
    await upstream.stop();
  });

  const post = async (path: string, body: unknown) => {
    const response = await fetch(`${gw.url}${path}`, {
      method: 'POST',
      headers: {
        authorization: `Bearer ${token}`,
        'content-type': 'application/json',
        'anthropic-version': '2023-06-01',
      },
      body: JSON.stringify(body),
    });
    return { status: response.status, body: (await response.json()) as any };
  };

  const expectOpenAI400 = (answer: { status: number; body: any }, param: string, message: RegExp) => {
    expect(answer.status).toBe(400);
    expect(answer.body).toEqual({
      error: { message: expect.stringMatching(message), type: 'invalid_request_error', param, code: null },
    });
  };
  const expectAnthropic400 = (answer: { status: number; body: any }, message: RegExp) => {
    expect(answer.status).toBe(400);
    expect(answer.body).toEqual({
      type: 'error',
      error: { type: 'invalid_request_error', message: expect.stringMatching(message) },
      request_id: expect.any(String),
    });
  };

  describe.each([[[]], [[[]]], [null], ['x'], [5]])('where a message or an item belongs: %j', (stray) => {
    it('chat completions: 400 naming the message, nothing forwarded', async () => {
      const before = upstream.requests.length;
      expectOpenAI400(
        await post('/v1/chat/completions', {
          model: 'echo',
          messages: [{ role: 'user', content: 'hi' }, stray],
        }),
        'messages[1]',
        /^Invalid 'messages\[1\]': must be an object\.$/,
      );
      expect(upstream.requests.length).toBe(before);
    });

    it.each(['/v1/messages', '/v1/messages/count_tokens'])(
      '%s: 400 in Anthropic\'s shape (it was a 500: "blocks is not iterable")',
      async (path) => {
        expectAnthropic400(
          await post(path, { model: 'echo', max_tokens: 16, messages: [stray] }),
          /^Invalid 'messages\[0\]': must be an object\.$/,
        );
      },
    );

    it("Messages content blocks, and a tool result's blocks", async () => {
      expectAnthropic400(
        await post('/v1/messages', {
          model: 'echo',
          max_tokens: 16,
          messages: [{ role: 'user', content: [stray] }],
        }),
        /messages\[0\]\.content/,
      );
      const result = { type: 'tool_result', tool_use_id: 't', content: [stray] };
      expectAnthropic400(
        await post('/v1/messages', {
          model: 'echo',
          max_tokens: 16,
          messages: [{ role: 'user', content: [result] }],
        }),
        /messages\[0\]\.content/,
      );
    });

    it('responses: 400 naming the input item', async () => {
      expectOpenAI400(
        await post('/v1/responses', { model: 'echo', input: [{ role: 'user', content: 'hi' }, stray] }),
        'input',
        /\[1\]/,
      );
      expectOpenAI400(
        await post('/v1/responses', { model: 'echo', input: [{ role: 'user', content: [stray] }] }),
        'input',
        /\[0\]\.content/,
      );
    });

    it('embeddings: 400 naming the input (among token arrays, where a string is an input too)', async () => {
      expectOpenAI400(
        await post('/v1/embeddings', { model: 'embed', input: [[1, 2], stray] }),
        'input',
        /^Invalid 'input'/,
      );
    });
  });

  it("chat completions: at most 128 tools (OpenAI's limit), a 400 that names it", async () => {
    const tool = {
      type: 'function',
      function: { name: 'f', parameters: { type: 'object', properties: {} } },
    };
    expectOpenAI400(
      await post('/v1/chat/completions', {
        model: 'echo',
        messages: [{ role: 'user', content: 'hi' }],
        tools: Array(129).fill(tool),
      }),
      'tools',
      /at most 128 tools \(OpenAI's limit per request\)/,
    );
    expect(
      (
        await post('/v1/chat/completions', {
          model: 'echo',
          messages: [{ role: 'user', content: 'hi' }],
          tools: Array(128).fill(tool),
        })
      ).status,
    ).toBe(200);
  });

  it("embeddings: at most 2048 inputs and 300,000 tokens in all (OpenAI's limits)", async () => {
    expectOpenAI400(
      await post('/v1/embeddings', { model: 'embed', input: Array(2049).fill('x') }),
      'input',
      /at most 2048 items/,
    );
    expectOpenAI400(
      await post('/v1/embeddings', {
        model: 'embed',
        input: [Array(150_000).fill(1), Array(150_001).fill(1)],
      }),
      'input',
      /at most 300000 tokens in all \(300001 given\)/,
    );
    expect(
      (
        await post('/v1/embeddings', {
          model: 'embed',
          input: [Array(150_000).fill(1), Array(150_000).fill(1)],
        })
      ).status,
    ).toBe(200);
  });

  it("responses: a conversation continued past the gateway's value limit is refused before it is loaded into a request", async () => {
    // 20,000 one-word messages are 60,003 values; two such turns are past 100,000.
    const input = Array.from({ length: 20_000 }, () => ({ role: 'user', content: 'a' }));
    const first = await post('/v1/responses', { model: 'echo', input });
    expect(first.status).toBe(200);
    expectOpenAI400(
      await post('/v1/responses', { model: 'echo', input, previous_response_id: first.body.id }),
      'previous_response_id',
      /more than 100,000 JSON objects, arrays and strings/,
    );
    // A short continuation is fine.
    expect(
      (
        await post('/v1/responses', {
          model: 'echo',
          input: 'and then?',
          previous_response_id: first.body.id,
        })
      ).status,
    ).toBe(200);
  });
});
