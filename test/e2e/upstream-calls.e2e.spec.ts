import { randomBytes } from 'node:crypto';
import OpenAI from 'openai';
import { OpenAIUpstream } from '../support/openai-upstream';
import { startTestGateway, type TestGateway } from '../support/test-gateway';

/**
 * How many calls reach each upstream on the retry and failure paths, counted on the stand-ins themselves (each
 * test asks with its own text, so it counts only its own calls): a failure before the first byte goes to the next
 * deployment once; nothing is sent again after the first byte; a refused key is never tried again on the same
 * deployment; a client mistake is never retried.
 */
describe('upstream calls on retry and failure paths', () => {
  let first: OpenAIUpstream;
  let second: OpenAIUpstream;
  let gw: TestGateway;
  let client: OpenAI;

  const on = (backend: string, upstreamModel: string, priority = 0) => ({ backend, upstreamModel, priority });
  /** Calls with this text that reached `upstream`. */
  const calls = (upstream: OpenAIUpstream, text: string) =>
    upstream.requests.filter((r) => JSON.stringify(r.body.messages ?? []).includes(text)).length;
  const unique = () => `ask ${randomBytes(4).toString('hex')}`;
  const ask = (model: string, content: string) => ({
    model,
    messages: [{ role: 'user' as const, content }],
  });
  const readStream = async (stream: AsyncIterable<OpenAI.ChatCompletionChunk>) => {
    let text = '';
    try {
      for await (const chunk of stream) text += chunk.choices[0]?.delta.content ?? '';
      return { text };
    } catch (error) {
      return { text, error };
    }
  };

  beforeAll(async () => {
    [first, second] = await Promise.all([new OpenAIUpstream().start(), new OpenAIUpstream().start()]);
    gw = await startTestGateway({
      upstreamUrl: first.url,
      config: {
        // Two retries: a plan of three calls, so "called once" is a real bound, not the plan's length.
        routing: { retries: { attempts: 2, backoffMs: 5 }, circuit: { failures: 100, cooldownMs: 60_000 } },
        backends: {
          first: { type: 'openai', baseUrl: first.url, apiKey: '${TEST_UPSTREAM_KEY}' },
          second: { type: 'openai', baseUrl: second.url, apiKey: '${TEST_UPSTREAM_KEY}' },
          // The same server under another backend id: a refused key opens its deployment's circuit at once, so the
          // streamed and non-streamed 401 cases each need a deployment of their own (no order dependence).
          'first-again': { type: 'openai', baseUrl: first.url, apiKey: '${TEST_UPSTREAM_KEY}' },
        },
        models: {
          'fails-first': {
            routing: 'priority',
            deployments: [on('first', 'status-500'), on('second', 'echo', 1)],
          },
          'refused-first': {
            routing: 'priority',
            deployments: [on('first', 'status-401'), on('second', 'echo', 1)],
          },
          'refused-first-stream': {
            routing: 'priority',
            deployments: [on('first-again', 'status-401'), on('second', 'echo', 1)],
          },
          'refused-only': { backend: 'first', upstreamModel: 'status-403' },
          'midstream-first': {
            routing: 'priority',
            deployments: [on('first', 'midstream-error'), on('second', 'echo', 1)],
          },
          'cut-first': { routing: 'priority', deployments: [on('first', 'cut'), on('second', 'echo', 1)] },
          'mistake-first': {
            routing: 'priority',
            deployments: [on('first', 'status-400'), on('second', 'echo', 1)],
          },
          'always-500': { backend: 'first', upstreamModel: 'status-500' },
        },
      },
    });
    client = gw.openai((await gw.teamToken('callers')).token);
  });
  afterAll(async () => {
    await gw.close();
    await Promise.all([first.stop(), second.stop()]);
  });

  it('a stream that fails before its first token is sent to the next deployment exactly once', async () => {
    const text = unique();
    const stream = await client.chat.completions.create({ ...ask('fails-first', text), stream: true });
    expect(await readStream(stream)).toEqual({ text: `echo: ${text}` });
    expect(calls(first, text)).toBe(1);
    expect(calls(second, text)).toBe(1);
  });

  it('so is a non-streaming request', async () => {
    const text = unique();
    const completion = await client.chat.completions.create(ask('fails-first', text));
    expect(completion.choices[0].message.content).toBe(`echo: ${text}`);
    expect([calls(first, text), calls(second, text)]).toEqual([1, 1]);
  });

  it('a stream that fails after its first byte (an in-band error) is not sent again anywhere', async () => {
    const text = unique();
    const stream = await client.chat.completions.create({ ...ask('midstream-first', text), stream: true });
    const { error } = await readStream(stream);
    expect(error).toBeDefined();
    expect([calls(first, text), calls(second, text)]).toEqual([1, 0]);
  });

  it('a stream whose connection is cut after its first byte is not sent again anywhere', async () => {
    const text = unique();
    const stream = await client.chat.completions.create({ ...ask('cut-first', text), stream: true });
    const { error } = await readStream(stream);
    expect(error).toBeDefined();
    expect([calls(first, text), calls(second, text)]).toEqual([1, 0]);
  });

  it.each([false, true])(
    'a refused key (401) is never tried again on the same deployment (stream: %s)',
    async (stream) => {
      const text = unique();
      if (stream) {
        const chunks = await client.chat.completions.create({
          ...ask('refused-first-stream', text),
          stream: true,
        });
        expect(await readStream(chunks)).toEqual({ text: `echo: ${text}` });
      } else {
        const completion = await client.chat.completions.create(ask('refused-first', text));
        expect(completion.choices[0].message.content).toBe(`echo: ${text}`);
      }
      expect([calls(first, text), calls(second, text)]).toEqual([1, 1]);
    },
  );

  it('a deployment whose key is refused (403) and that is the only one is called once, not 1 + retries times', async () => {
    const text = unique();
    const error = await client.chat.completions.create(ask('refused-only', text)).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(OpenAI.APIError);
    expect((error as InstanceType<typeof OpenAI.APIError>).status).toBe(502);
    expect(calls(first, text)).toBe(1);
  });

  it("the client's own mistake (400) is called once and not retried on another deployment", async () => {
    const text = unique();
    const error = await client.chat.completions.create(ask('mistake-first', text)).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(OpenAI.BadRequestError);
    expect([calls(first, text), calls(second, text)]).toEqual([1, 0]);
  });

  it('a failing only deployment is called 1 + retries times, no more', async () => {
    const text = unique();
    const stream = client.chat.completions.create({ ...ask('always-500', text), stream: true });
    await expect(stream).rejects.toBeInstanceOf(OpenAI.APIError);
    expect(calls(first, text)).toBe(3);
  });
});
