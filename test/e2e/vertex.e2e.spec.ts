import { generateKeyPairSync } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Anthropic from '@anthropic-ai/sdk';
import type OpenAI from 'openai';
import { VERTEX_ANTHROPIC_BETAS } from '../../src/providers/vertex/vertex-paths';
import { eventually, untilPast } from '../support/eventually';
import { startTestGateway, type TestGateway } from '../support/test-gateway';
import { AnthropicUpstream } from '../support/anthropic-upstream';
import { VertexUpstream, vertexVector } from '../support/vertex-upstream';

const PROJECT = 'switchyard-test';
const MODELS = `/v1/projects/${PROJECT}/locations/us-east5/publishers`;

/**
 * Google Vertex AI through the gateway, to a stand-in that follows Vertex's wire and is the service account's token
 * endpoint (test/support/vertex-upstream.ts): Gemini and Claude models from the openai SDK, Claude natively from
 * the Anthropic SDK, embeddings, the OAuth token's refresh, a 429 RESOURCE_EXHAUSTED failed over, and credentials
 * that never show.
 */
describe('Vertex AI backends', () => {
  jest.setTimeout(60_000);
  let vertex: VertexUpstream;
  let shortLived: VertexUpstream;
  let anthropicApi: AnthropicUpstream;
  let gw: TestGateway;
  let dir: string;
  let client: OpenAI;
  let anthropic: Anthropic;
  let wrongKeyPem: string;

  beforeAll(async () => {
    [vertex, shortLived, anthropicApi] = await Promise.all([
      new VertexUpstream(34).start(),
      new VertexUpstream(35).start(),
      new AnthropicUpstream(36).start(),
    ]);
    shortLived.tokenLifetime = 3;
    dir = mkdtempSync(join(tmpdir(), 'vertex-e2e-'));
    const keyFile = vertex.writeKeyFile(dir);
    const shortDir = mkdtempSync(join(dir, 'short-'));
    const shortKeyFile = shortLived.writeKeyFile(shortDir);
    const wrongDir = mkdtempSync(join(dir, 'wrong-'));
    wrongKeyPem = generateKeyPairSync('rsa', { modulusLength: 2048 })
      .privateKey.export({ type: 'pkcs8', format: 'pem' })
      .toString();
    const wrongKeyFile = vertex.writeKeyFile(wrongDir, wrongKeyPem);
    const backend = (baseUrl: string, credentialsFile: string, extra: object = {}) => ({
      type: 'vertex',
      project: PROJECT,
      region: 'us-east5',
      baseUrl,
      credentialsFile,
      timeouts: { firstByteMs: 5000, idleMs: 5000 },
      ...extra,
    });
    gw = await startTestGateway({
      upstreamUrl: vertex.url,
      config: {
        backends: {
          vertex: backend(vertex.url, keyFile),
          'vertex-short': backend(shortLived.url, shortKeyFile),
          'vertex-wrong-key': backend(vertex.url, wrongKeyFile),
          // The same refused key on a backend of its own, for the logs test to cause its own refusal.
          'vertex-wrong-key-logged': backend(vertex.url, wrongKeyFile),
          'vertex-other-project': backend(vertex.url, keyFile, { project: 'someone-else' }),
          anthropic: { type: 'anthropic', baseUrl: anthropicApi.url, apiKey: '${TEST_UPSTREAM_KEY}' },
          'vertex-no-key-file': backend(vertex.url, join(dir, 'never-written.json')),
        },
        models: {
          gemini: { backend: 'vertex', upstreamModel: 'gemini-echo', thinking: 'native' },
          claude: { backend: 'vertex', upstreamModel: 'claude-echo', thinking: 'native' },
          'claude-named': { backend: 'vertex', upstreamModel: 'anthropic/claude-echo' },
          embed: { backend: 'vertex', upstreamModel: 'text-embedding-005', kind: 'embedding' },
          'embed-gemini': { backend: 'vertex', upstreamModel: 'gemini-embedding-001', kind: 'embedding' },
          'gemini-short': { backend: 'vertex-short', upstreamModel: 'gemini-echo' },
          'gemini-wrong-key': { backend: 'vertex-wrong-key', upstreamModel: 'gemini-echo' },
          'gemini-wrong-key-logged': { backend: 'vertex-wrong-key-logged', upstreamModel: 'gemini-echo' },
          'gemini-other-project': { backend: 'vertex-other-project', upstreamModel: 'gemini-echo' },
          'claude-exhausted': { backend: 'vertex', upstreamModel: 'claude-exhausted' },
          'gemini-leaky': { backend: 'vertex', upstreamModel: 'gemini-leak-token' },
          'gemini-no-key-file': { backend: 'vertex-no-key-file', upstreamModel: 'gemini-echo' },
          'gemini-midstream': { backend: 'vertex', upstreamModel: 'gemini-midstream' },
          'claude-midstream': { backend: 'vertex', upstreamModel: 'claude-midstream' },
          // One Claude model on two clouds: Vertex first, Anthropic's own API when Vertex throttles.
          'claude-two-clouds': {
            routing: 'priority',
            thinking: 'native',
            deployments: [
              // its own throttled model: the other tests' 429s must not open this deployment's circuit
              { backend: 'vertex', upstreamModel: 'claude-cloud-exhausted', priority: 0 },
              { backend: 'anthropic', upstreamModel: 'claude-echo', priority: 1 },
            ],
          },
          'claude-failover': {
            routing: 'priority',
            deployments: [
              { backend: 'vertex', upstreamModel: 'claude-exhausted', priority: 0 },
              { backend: 'vertex', upstreamModel: 'claude-echo', priority: 1 },
            ],
          },
        },
      },
    });
    const { token } = await gw.teamToken('vertex-team');
    client = gw.openai(token);
    anthropic = new Anthropic({ apiKey: token, baseURL: gw.url, maxRetries: 0 });
  });

  afterAll(async () => {
    await gw?.close();
    await Promise.all([vertex?.stop(), shortLived?.stop(), anthropicApi?.stop()]);
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  const bearerOf = (request: { headers: Record<string, unknown> }) =>
    String(request.headers.authorization).replace(/^Bearer /, '');

  describe('Gemini models', () => {
    it('chat, not streamed: generateContent in the project and region, with a token from the service account', async () => {
      const reply = await client.chat.completions.create({
        model: 'gemini',
        messages: [{ role: 'user', content: 'hello vertex' }],
      });
      expect(reply.choices[0].message.content).toBe('echo: hello vertex');
      expect(reply.usage).toMatchObject({ prompt_tokens: expect.any(Number), completion_tokens: 3 });
      const call = vertex.modelCalls('gemini-echo').at(-1)!;
      expect(call.path).toBe(`${MODELS}/google/models/gemini-echo:generateContent`);
      expect(vertex.issued.map((t) => t.token)).toContain(bearerOf(call));
      expect(call.headers['x-goog-api-key']).toBeUndefined();
    });

    it('chat, streamed: streamGenerateContent?alt=sse decoded by the Gemini mapper, with usage', async () => {
      const stream = await client.chat.completions.create({
        model: 'gemini',
        stream: true,
        stream_options: { include_usage: true },
        messages: [{ role: 'user', content: 'stream me please' }],
      });
      let text = '';
      let usage: OpenAI.CompletionUsage | undefined | null;
      for await (const chunk of stream) {
        text += chunk.choices[0]?.delta.content ?? '';
        usage = chunk.usage ?? usage;
      }
      expect(text).toBe('echo: stream me please');
      expect(usage).toMatchObject({ completion_tokens: 4 });
      expect(vertex.modelCalls('gemini-echo').at(-1)!.path).toBe(
        `${MODELS}/google/models/gemini-echo:streamGenerateContent?alt=sse`,
      );
    });

    it('/v1/messages to a Gemini model on Vertex is translated, not passed through', async () => {
      const message = await anthropic.messages.create({
        model: 'gemini',
        max_tokens: 100,
        messages: [{ role: 'user', content: 'translated' }],
      });
      expect(message.content[0]).toMatchObject({ type: 'text', text: 'echo: translated' });
      expect(vertex.modelCalls('gemini-echo').at(-1)!.body.contents).toEqual([
        { role: 'user', parts: [{ text: 'translated' }] },
      ]);
    });
  });

  describe('Claude models', () => {
    it('chat, not streamed: rawPredict with the Messages body, no model, anthropic_version vertex-2023-10-16', async () => {
      const reply = await client.chat.completions.create({
        model: 'claude',
        max_tokens: 200,
        messages: [{ role: 'user', content: 'hi claude' }],
      });
      expect(reply.choices[0].message.content).toBe('echo: hi claude');
      // Cache reads and writes (4 + 2 from the stand-in) are prompt tokens.
      expect(reply.usage?.prompt_tokens_details?.cached_tokens).toBe(4);
      const call = vertex.modelCalls('claude-echo').at(-1)!;
      expect(call.path).toBe(`${MODELS}/anthropic/models/claude-echo:rawPredict`);
      expect(call.body.anthropic_version).toBe('vertex-2023-10-16');
      expect(call.body).not.toHaveProperty('model');
    });

    it('chat, streamed: streamRawPredict, Anthropic events decoded into chunks', async () => {
      const stream = await client.chat.completions.create({
        model: 'claude-named',
        max_tokens: 200,
        stream: true,
        stream_options: { include_usage: true },
        messages: [{ role: 'user', content: 'stream claude' }],
      });
      let text = '';
      let usage: OpenAI.CompletionUsage | undefined | null;
      for await (const chunk of stream) {
        text += chunk.choices[0]?.delta.content ?? '';
        usage = chunk.usage ?? usage;
      }
      expect(text).toBe('echo: stream claude');
      expect(usage?.total_tokens).toBe((usage?.prompt_tokens ?? 0) + (usage?.completion_tokens ?? 0));
      const call = vertex.modelCalls('claude-echo').at(-1)!;
      expect(call.path).toBe(`${MODELS}/anthropic/models/claude-echo:streamRawPredict`);
      expect(call.body.stream).toBe(true);
    });

    it('every beta the backend passes by default is one Vertex accepts (the stand-in keeps its own list)', async () => {
      const reply = await anthropic.messages.create(
        { model: 'claude', max_tokens: 100, messages: [{ role: 'user', content: 'all the betas' }] },
        { headers: { 'anthropic-beta': VERTEX_ANTHROPIC_BETAS.join(',') } },
      );
      expect(reply.type).toBe('message');
      const sent = String(vertex.modelCalls('claude-echo').at(-1)!.headers['anthropic-beta']).split(',');
      expect(sent.sort()).toEqual([...VERTEX_ANTHROPIC_BETAS].sort());
    });

    it("/v1/messages natively: the client's bytes, betas Vertex knows, thinking signatures intact over two turns", async () => {
      const first = await anthropic.messages.create(
        {
          model: 'claude',
          max_tokens: 4000,
          thinking: { type: 'enabled', budget_tokens: 2000 },
          messages: [{ role: 'user', content: 'think first' }],
        },
        { headers: { 'anthropic-beta': 'claude-code-20250219,interleaved-thinking-2025-05-14' } },
      );
      expect(first.content[0]).toMatchObject({ type: 'thinking', signature: expect.stringMatching(/^sig-/) });
      expect(first.model).toBe('claude');
      const call = vertex.modelCalls('claude-echo').at(-1)!;
      // Vertex refuses a request with a beta it does not know: claude-code-* is left out, the rest goes.
      expect(call.headers['anthropic-beta']).toBe('interleaved-thinking-2025-05-14');
      expect(call.text.startsWith('{"anthropic_version":"vertex-2023-10-16",')).toBe(true);

      const stream = anthropic.messages.stream({
        model: 'claude',
        max_tokens: 4000,
        thinking: { type: 'enabled', budget_tokens: 2000 },
        messages: [
          { role: 'user', content: 'think first' },
          { role: 'assistant', content: first.content as Anthropic.ContentBlockParam[] },
          { role: 'user', content: 'and again' },
        ],
      });
      const second = await stream.finalMessage();
      expect(second.content.find((b) => b.type === 'text')).toMatchObject({ text: 'echo: and again' });
      const replay = vertex.modelCalls('claude-echo').at(-1)!;
      expect(replay.path).toBe(`${MODELS}/anthropic/models/claude-echo:streamRawPredict`);
      // The replayed thinking block reached Vertex exactly as the model signed it (the stand-in checks it too).
      expect(replay.body.messages[1].content[0]).toEqual(first.content[0]);
    });

    it('Responses: translated to the Messages body on rawPredict, streamed and not', async () => {
      const plain = await client.responses.create({
        model: 'claude',
        input: 'respond please',
        max_output_tokens: 100,
      });
      expect(plain.output_text).toBe('echo: respond please');
      expect(vertex.modelCalls('claude-echo').at(-1)!.path).toBe(
        `${MODELS}/anthropic/models/claude-echo:rawPredict`,
      );
      const stream = await client.responses.create({
        model: 'claude',
        input: 'stream a response',
        max_output_tokens: 100,
        stream: true,
      });
      let text = '';
      for await (const event of stream) if (event.type === 'response.output_text.delta') text += event.delta;
      expect(text).toBe('echo: stream a response');
      expect(vertex.modelCalls('claude-echo').at(-1)!.path).toBe(
        `${MODELS}/anthropic/models/claude-echo:streamRawPredict`,
      );
    });

    it("count_tokens goes to Vertex's count-tokens model: an exact count", async () => {
      const { data, response } = await anthropic.messages
        .countTokens({ model: 'claude', messages: [{ role: 'user', content: 'count these four words' }] })
        .withResponse();
      expect(response.headers.get('x-switchyard-token-count')).toBe('exact');
      expect(data.input_tokens).toBeGreaterThan(0);
      const call = vertex.modelCalls('count-tokens').at(-1)!;
      expect(call.path).toBe(`${MODELS}/anthropic/models/count-tokens:rawPredict`);
      expect(call.body).toMatchObject({ model: 'claude-echo', anthropic_version: 'vertex-2023-10-16' });
    });
  });

  it("embeddings: :predict with one instance per input; usage is Vertex's token count", async () => {
    const reply = await client.embeddings.create({ model: 'embed', input: ['one two three', 'four five'] });
    expect(reply.data.map((d) => d.embedding.length)).toEqual([8, 8]);
    expect(reply.usage).toEqual({ prompt_tokens: 5, total_tokens: 5 });
    const call = vertex.modelCalls('text-embedding-005').at(-1)!;
    expect(call.path).toBe(`${MODELS}/google/models/text-embedding-005:predict`);
    expect(call.body).toEqual({ instances: [{ content: 'one two three' }, { content: 'four five' }] });
  });

  describe('embeddings split to the instances a call of the model takes', () => {
    // The openai SDK asks for base64: float32, so each value as float32 rounds it.
    const asSent = (vector: number[]) => vector.map(Math.fround);

    it('gemini-embedding-001 (one instance a call): three inputs are three calls, answered in order', async () => {
      const before = vertex.modelCalls('gemini-embedding-001').length;
      const input = ['alpha', 'beta gamma', 'delta epsilon zeta'];
      const reply = await client.embeddings.create({ model: 'embed-gemini', input });
      const calls = vertex.modelCalls('gemini-embedding-001').slice(before);
      expect(calls).toHaveLength(3);
      expect(calls.map((c) => c.body.instances)).toEqual(
        expect.arrayContaining(input.map((content) => [{ content }])),
      );
      expect(reply.data.map((d) => d.index)).toEqual([0, 1, 2]);
      expect(reply.data.map((d) => d.embedding)).toEqual(input.map((text) => asSent(vertexVector(text))));
      expect(reply.usage).toEqual({ prompt_tokens: 6, total_tokens: 6 });
    });

    it('text-embedding-005 (250 a call): 600 inputs are calls of 250, 250 and 100, in order, usage summed', async () => {
      const before = vertex.modelCalls('text-embedding-005').length;
      const input = Array.from({ length: 600 }, (_, i) => `text number ${i}`);
      const reply = await client.embeddings.create({ model: 'embed', input, dimensions: 4 });
      const calls = vertex.modelCalls('text-embedding-005').slice(before);
      expect(calls.map((c) => c.body.instances.length).sort((a, b) => b - a)).toEqual([250, 250, 100]);
      for (const call of calls) expect(call.body.parameters).toEqual({ outputDimensionality: 4 });
      expect(reply.data).toHaveLength(600);
      expect(reply.data.map((d) => d.index)).toEqual(input.map((_, i) => i));
      expect(reply.data.map((d) => d.embedding)).toEqual(input.map((text) => asSent(vertexVector(text, 4))));
      expect(reply.usage).toEqual({ prompt_tokens: 1800, total_tokens: 1800 });
    });

    it('inputs over 20,000 tokens together go in calls under the cap (counted at a byte a token at most)', async () => {
      const before = vertex.modelCalls('text-embedding-005').length;
      // 100 texts of 300 words: 30,000 tokens as the stand-in counts them, over Vertex's cap in one call.
      const input = Array.from({ length: 100 }, (_, i) => `${i} ${'word '.repeat(299)}`);
      const reply = await client.embeddings.create({ model: 'embed', input });
      const calls = vertex.modelCalls('text-embedding-005').slice(before);
      const bytesOf = (call: (typeof calls)[number]) =>
        call.body.instances.reduce(
          (n: number, i: { content: string }) => n + Buffer.byteLength(i.content),
          0,
        );
      expect(calls.length).toBeGreaterThan(1);
      for (const call of calls) expect(bytesOf(call)).toBeLessThanOrEqual(20_000);
      expect(calls.reduce((n, call) => n + call.body.instances.length, 0)).toBe(100);
      expect(reply.data.map((d) => d.embedding)).toEqual(input.map((text) => asSent(vertexVector(text))));
      expect(reply.usage).toEqual({ prompt_tokens: 30_000, total_tokens: 30_000 });
    });

    it("one call Vertex refuses (its quota spent after the first) fails the whole request with Vertex's error", async () => {
      const before = vertex.modelCalls('gemini-embedding-001').length;
      vertex.predictQuota = 1;
      try {
        const failed = await client.embeddings
          .create({ model: 'embed-gemini', input: ['first', 'second', 'third'] }, { maxRetries: 0 })
          .catch((e: unknown) => e);
        expect(failed).toMatchObject({
          status: 429,
          error: { type: 'RESOURCE_EXHAUSTED', message: expect.stringContaining('Quota exceeded') },
        });
      } finally {
        vertex.predictQuota = undefined;
      }
      const calls = vertex.modelCalls('gemini-embedding-001').slice(before);
      // The three parts at once, each of them again for every retry the gateway made on the 429.
      expect(calls.length % 3).toBe(0);
      expect(calls.length).toBeGreaterThanOrEqual(3);
    });
  });

  it('the token is fetched once, kept, and replaced before it expires (a 3 s token: a second one is fetched)', async () => {
    const ask = () =>
      client.chat.completions.create({
        model: 'gemini-short',
        messages: [{ role: 'user', content: 'tick' }],
      });
    await Promise.all([ask(), ask()]);
    expect(shortLived.issued).toHaveLength(1); // two requests at once: one fetch
    const [first] = shortLived.issued;
    // The stand-in refuses an expired token (401): the second call succeeds only with a new one.
    await untilPast(first.expiresAt);
    const reply = await ask();
    expect(reply.choices[0].message.content).toBe('echo: tick');
    expect(shortLived.issued).toHaveLength(2);
    expect(bearerOf(shortLived.modelCalls().at(-1)!)).toBe(shortLived.issued[1].token);
  });

  it('a 429 RESOURCE_EXHAUSTED is a 429, retried on the next deployment and counted as the backend failing', async () => {
    await expect(
      client.chat.completions.create({
        model: 'claude-exhausted',
        max_tokens: 50,
        messages: [{ role: 'user', content: 'x' }],
      }),
    ).rejects.toMatchObject({ status: 429 });
    const { data, response } = await client.chat.completions
      .create({
        model: 'claude-failover',
        max_tokens: 50,
        messages: [{ role: 'user', content: 'fail over' }],
      })
      .withResponse();
    expect(data.choices[0].message.content).toBe('echo: fail over');
    expect(response.headers.get('x-switchyard-attempts')).toBe('2');
    const metrics = await (await fetch(`${gw.url}/metrics`)).text();
    expect(metrics).toMatch(
      /switchyard_upstream_errors_total\{backend="vertex",reason="rate_limit_exceeded"\} [1-9]/,
    );
  });

  it('one Claude model on Vertex and Anthropic: a throttled Vertex hands the native request to Anthropic, each in its own shape', async () => {
    const before = vertex.modelCalls('claude-cloud-exhausted').length;
    const { data, response } = await anthropic.messages
      .create(
        {
          model: 'claude-two-clouds',
          max_tokens: 3000,
          thinking: { type: 'enabled', budget_tokens: 1500 },
          messages: [{ role: 'user', content: 'which cloud' }],
        },
        { headers: { 'anthropic-beta': 'claude-code-20250219' } },
      )
      .withResponse();
    expect(data.content.find((b) => b.type === 'text')).toMatchObject({ text: 'echo: which cloud' });
    expect(response.headers.get('x-switchyard-backend')).toBe('anthropic');
    expect(response.headers.get('x-switchyard-attempts')).toBe('2');
    const throttled = vertex.modelCalls('claude-cloud-exhausted');
    expect(throttled.length).toBe(before + 1);
    expect(throttled.at(-1)!.body).not.toHaveProperty('model');
    expect(throttled.at(-1)!.headers['anthropic-beta']).toBeUndefined();
    const answered = anthropicApi.last();
    expect(answered.path).toBe('/v1/messages');
    expect(answered.body).toMatchObject({ model: 'claude-echo', thinking: { type: 'enabled' } });
    expect(answered.body).not.toHaveProperty('anthropic_version');
    expect(answered.headers['anthropic-beta']).toBe('claude-code-20250219');
  });

  it('a key the token endpoint refuses, or a project the account may not use: 502, the deployment at fault', async () => {
    const wrong = await fetch(`${gw.url}/v1/chat/completions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${client.apiKey}`, 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'gemini-wrong-key', messages: [{ role: 'user', content: 'x' }] }),
    });
    expect(wrong.status).toBe(502);
    expect(((await wrong.json()) as { error: unknown }).error).toMatchObject({
      code: 'upstream_auth_failed',
    });
    expect(vertex.refusedGrants).toContain('invalid_grant: Invalid JWT Signature.');
    await expect(
      client.chat.completions.create({
        model: 'gemini-other-project',
        messages: [{ role: 'user', content: 'x' }],
      }),
    ).rejects.toMatchObject({ status: 502, code: 'upstream_auth_failed' });
  });

  it.each([
    ['gemini-midstream', /overloaded/],
    ['claude-midstream', /Overloaded/],
  ])(
    "%s: an error inside the stream ends it in-band, read by that publisher's mapper",
    async (model, said) => {
      const stream = await client.chat.completions.create({
        model,
        max_tokens: 50,
        stream: true,
        messages: [{ role: 'user', content: 'go on then' }],
      });
      let text = '';
      const read = (async () => {
        for await (const chunk of stream) text += chunk.choices[0]?.delta.content ?? '';
      })();
      await expect(read).rejects.toThrow(said);
      expect(text).toBe('echo: ');
    },
  );

  it('/v1/models lists the Vertex models with their family', async () => {
    const models = await client.models.list();
    const listed = new Map(models.data.map((m) => [m.id, (m as unknown as { family: string }).family]));
    expect(listed.get('gemini')).toBe('vertex');
    expect(listed.get('claude')).toBe('vertex');
    expect(listed.get('embed')).toBe('vertex');
  });

  it('a credentials file that is not there: its models answer 403 model_unavailable, naming it, and are not listed', async () => {
    const calls = vertex.requests.length;
    await expect(
      client.chat.completions.create({
        model: 'gemini-no-key-file',
        messages: [{ role: 'user', content: 'x' }],
      }),
    ).rejects.toMatchObject({
      status: 403,
      code: 'model_unavailable',
      message: expect.stringContaining('never-written.json (credentialsFile) cannot be used (ENOENT)'),
    });
    expect(vertex.requests.length).toBe(calls);
    expect((await client.models.list()).data.map((m) => m.id)).not.toContain('gemini-no-key-file');
    // Said at start too, like a missing key, for an operator reading the log rather than a client's 403.
    expect(gw.rawLogs.join('\n')).toMatch(
      /never-written\.json \(credentialsFile\) cannot be used \(ENOENT\): its models are not listed and answer 403/,
    );
  });

  it('a token Vertex quotes back in an error never reaches the client', async () => {
    const failure = (await client.chat.completions
      .create({ model: 'gemini-leaky', messages: [{ role: 'user', content: 'x' }] })
      .then(
        () => ({ status: 200, message: 'answered' }),
        (error: unknown) => error,
      )) as { status: number; message: string };
    const sent = bearerOf(vertex.modelCalls('gemini-leak-token').at(-1)!);
    expect(failure.status).toBe(400);
    expect(failure.message).toContain('[redacted]');
    expect(failure.message).not.toContain(sent);
    expect(failure.message).not.toContain(sent.slice(8, 24));
  });

  it('no token, key or assertion appears in the logs', async () => {
    // Its own traffic, so what it looks for is there whichever tests ran before: tokens issued on both token
    // endpoints, and a refused key.
    const ask = (model: string) =>
      client.chat.completions.create({ model, messages: [{ role: 'user', content: 'x' }] });
    await ask('gemini');
    await ask('gemini-short');
    await expect(ask('gemini-wrong-key-logged')).rejects.toMatchObject({ status: 502 });
    // the refusal is logged, in OAuth's words
    const logs = await eventually(() => {
      const all = gw.rawLogs.join('\n');
      expect(all).toContain('Invalid JWT Signature');
      return all;
    });
    const tokens = [...vertex.issued, ...shortLived.issued].map(({ token }) => token);
    expect(vertex.issued.length).toBeGreaterThan(0);
    expect(shortLived.issued.length).toBeGreaterThan(0);
    for (const token of tokens) expect(logs).not.toContain(token);
    const keyBody = (pem: string) => pem.split('\n')[5];
    expect(logs).not.toContain(keyBody(wrongKeyPem));
    expect(logs).not.toMatch(/eyJ[A-Za-z0-9_-]{20,}\./); // a JWT
  });
});
