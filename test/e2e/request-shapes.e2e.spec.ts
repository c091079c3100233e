import { AnthropicAdapter } from '../../src/providers/anthropic/anthropic.adapter';
import { AnthropicUpstream } from '../support/anthropic-upstream';
import { GeminiUpstream } from '../support/gemini-upstream';
import { OpenAIUpstream } from '../support/openai-upstream';
import { startTestGateway, type TestGateway } from '../support/test-gateway';

/**
 * Every endpoint checks the shape of every message, item and block before anything is translated or forwarded
 * (issue 32: `{"messages":[[]]}` was a 500 on /v1/messages and count_tokens and was forwarded by chat completions),
 * and the vendors' own per-request limits hold, each refusal a 400 in the API's own error shape.
 */
describe('request shapes and per-request item limits', () => {
  let upstream: OpenAIUpstream;
  let anthropic: AnthropicUpstream;
  let gemini: GeminiUpstream;
  let gw: TestGateway;
  let token: string;

  beforeAll(async () => {
    [upstream, anthropic, gemini] = await Promise.all([
      new OpenAIUpstream().start(),
      new AnthropicUpstream().start(),
      new GeminiUpstream().start(),
    ]);
    gw = await startTestGateway({
      upstreamUrl: upstream.url,
      config: {
        backends: {
          claude: { type: 'anthropic', baseUrl: anthropic.url, apiKey: '${TEST_UPSTREAM_KEY}' },
          google: { type: 'gemini', baseUrl: gemini.url, apiKey: '${TEST_UPSTREAM_KEY}' },
        },
        models: {
          embed: { backend: 'standin', upstreamModel: 'embed', kind: 'embedding' },
          claude: { backend: 'claude', upstreamModel: 'claude-echo' },
          gem: { backend: 'google', upstreamModel: 'gemini-echo' },
        },
      },
    });
    ({ token } = await gw.teamToken('shapes'));
  });
  afterAll(async () => {
    await gw.close();
    await Promise.all([upstream.stop(), anthropic.stop(), gemini.stop()]);
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

  /** Requests any stand-in has received so far: a refused body must add none. */
  const forwarded = () => upstream.requests.length + anthropic.requests.length + gemini.requests.length;

  // One model per family: a wrong shape that slipped through validation broke where a translation read it.
  describe.each(['echo', 'claude', 'gem'])('wrong shapes inside messages, to %s', (model) => {
    it.each([
      [null, /\[0\] must be an object/],
      [{ type: 'function', function: { name: 'f', arguments: '{}' } }, /\[0\]\.id must be a string/],
      [{ id: 'c', type: 'function', function: null }, /\[0\]\.function must be an object/],
      [{ id: 'c', type: 'function', function: { name: 5, arguments: '{}' } }, /\[0\]\.function/],
      [{ id: 'c', type: 'function', function: { name: 'f', arguments: {} } }, /\[0\]\.function/],
      [{ id: 'c', type: 'nope', function: { name: 'f', arguments: '{}' } }, /\[0\]\.type/],
    ])('chat tool_calls [%j]: 400 naming it, nothing forwarded', async (call, message) => {
      const before = forwarded();
      expectOpenAI400(
        await post('/v1/chat/completions', {
          model,
          messages: [
            { role: 'user', content: 'hi' },
            { role: 'assistant', content: null, tool_calls: [call] },
            { role: 'tool', tool_call_id: 'c', content: 'done' },
          ],
        }),
        'messages[1].tool_calls',
        message,
      );
      expect(forwarded()).toBe(before);
    });

    it.each([
      [{ type: 'image_url' }, /\[0\]\.image_url must be an object/],
      [{ type: 'image_url', image_url: 'https://example.com/a.png' }, /\[0\]\.image_url/],
      [{ type: 'image_url', image_url: {} }, /\[0\]\.image_url/],
      [{ type: 'input_audio' }, /\[0\]\.input_audio/],
      [{ type: 'input_audio', input_audio: { data: 'AAAA' } }, /\[0\]\.input_audio/],
      [{ type: 'file', file: 'x' }, /\[0\]\.file/],
      [{ type: 'refusal' }, /\[0\]\.refusal/],
    ])('chat content part %j: 400 naming it, nothing forwarded', async (part, message) => {
      const before = forwarded();
      expectOpenAI400(
        await post('/v1/chat/completions', { model, messages: [{ role: 'user', content: [part] }] }),
        'messages[0].content',
        message,
      );
      expect(forwarded()).toBe(before);
    });

    it.each([
      [{ type: 'image', source: { type: 'base64' } }, /\[0\]\.source\.media_type/],
      [{ type: 'image', source: { type: 'base64', media_type: 'image/png' } }, /\[0\]\.source\.data/],
      [{ type: 'image', source: { type: 'url' } }, /\[0\]\.source\.url/],
      [{ type: 'image', source: { type: 'nope' } }, /\[0\]\.source\.type must be one of/],
      [{ type: 'document', source: { type: 'text', data: 5 } }, /\[0\]\.source\.data/],
      [{ type: 'document', source: { type: 'content', content: [null] } }, /\[0\]\.source\.content\[0\]/],
    ])('Messages and count_tokens block %j: 400 naming it, nothing forwarded', async (block, message) => {
      for (const path of ['/v1/messages', '/v1/messages/count_tokens']) {
        const before = forwarded();
        expectAnthropic400(
          await post(path, { model, max_tokens: 16, messages: [{ role: 'user', content: [block] }] }),
          message,
        );
        expect(forwarded()).toBe(before);
      }
    });

    it.each([
      [{ type: 'message', role: 'user', content: [{ type: 'input_text' }] }, /\[0\]\.content\[0\]\.text/],
      [
        { type: 'message', role: 'user', content: [{ type: 'input_text', text: 5 }] },
        /\[0\]\.content\[0\]\.text/,
      ],
      [
        { type: 'message', role: 'assistant', content: [{ type: 'output_text' }] },
        /\[0\]\.content\[0\]\.text/,
      ],
      [{ type: 'message', role: 'user', content: [{ type: 'input_image', image_url: 5 }] }, /image_url/],
      [{ type: 'function_call_output', call_id: 'c', output: [null] }, /\[0\]\.output\[0\]/],
      [{ type: 'reasoning', id: 'rs_1', summary: [null] }, /\[0\]\.summary\[0\]/],
      [{ type: 'reasoning', id: 'rs_1', summary: [{ type: 'summary_text' }] }, /\[0\]\.summary\[0\]\.text/],
    ])('responses input item %j: 400 naming it, nothing forwarded', async (item, message) => {
      const before = forwarded();
      expectOpenAI400(await post('/v1/responses', { model, input: [item] }), 'input', message);
      expect(forwarded()).toBe(before);
    });
  });

  it.each([false, true])(
    "a fault in the gateway's own code while building the upstream call (stream: %s) is a 500 internal_error, never a 502 that blames the backend",
    async (stream) => {
      // A bug stands in for whatever input validation has not caught: the adapter throws before anything is sent.
      const build = jest.spyOn(AnthropicAdapter.prototype, 'buildRequest').mockImplementationOnce(() => {
        throw new TypeError("Cannot read properties of null (reading 'name')");
      });
      try {
        const before = forwarded();
        const answer = await post('/v1/chat/completions', {
          model: 'claude',
          stream,
          messages: [{ role: 'user', content: 'hi' }],
        });
        expect(build).toHaveBeenCalled();
        expect(answer.status).toBe(500);
        expect(answer.body.error).toMatchObject({ type: 'server_error', code: 'internal_error' });
        expect(answer.body.error.message).toMatch(/internal error \(error id [0-9a-f-]{36}\)/);
        expect(forwarded()).toBe(before);
        // The operator gets the error (and its id); the deployment is not blamed: the next request goes through.
        expect(gw.logs.some((line) => line.msg === 'unhandled error')).toBe(true);
        const next = await post('/v1/chat/completions', {
          model: 'claude',
          messages: [{ role: 'user', content: 'hi' }],
        });
        expect(next.status).toBe(200);
      } finally {
        build.mockRestore();
      }
    },
  );

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

  it("responses: at most 128 tools (OpenAI's limit), a 400 that names it", async () => {
    const tool = { type: 'function', name: 'f', parameters: { type: 'object', properties: {} } };
    const before = forwarded();
    expectOpenAI400(
      await post('/v1/responses', { model: 'echo', input: 'hi', tools: Array(129).fill(tool) }),
      'tools',
      /at most 128 tools \(OpenAI's limit per request\)/,
    );
    expect(forwarded()).toBe(before);
    expect(
      (await post('/v1/responses', { model: 'echo', input: 'hi', tools: Array(128).fill(tool) })).status,
    ).toBe(200);
  });

  it('messages: 128 tools at most when translated to chat completions (OpenAI-compatible, Gemini), a 400 that names it; none published for Anthropic itself', async () => {
    const tool = { name: 'f', input_schema: { type: 'object', properties: {} } };
    const ask = (model: string, count: number) =>
      post('/v1/messages', {
        model,
        max_tokens: 16,
        messages: [{ role: 'user', content: 'hi' }],
        tools: Array(count).fill(tool),
      });
    for (const model of ['echo', 'gem']) {
      const before = forwarded();
      expectAnthropic400(await ask(model, 129), /'tools' must have at most 128 tools/);
      expect(forwarded()).toBe(before);
      expect((await ask(model, 128)).status).toBe(200);
    }
    expect((await ask('claude', 129)).status).toBe(200);
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
