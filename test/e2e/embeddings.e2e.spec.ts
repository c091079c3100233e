import { countTokens } from 'gpt-tokenizer'; // its default encoding is o200k_base
import OpenAI from 'openai';
import { GeminiUpstream } from '../support/gemini-upstream';
import { OpenAIUpstream, standInEmbedding } from '../support/openai-upstream';
import { startTestGateway, type TestGateway } from '../support/test-gateway';
import { waitForUsageRecord, waitForUsageRecords } from '../support/usage';

/** POST /v1/embeddings with the official openai SDK, to an OpenAI-compatible stand-in, accounted like chat. */
describe('embeddings', () => {
  let upstream: OpenAIUpstream;
  let gemini: GeminiUpstream;
  let gw: TestGateway;
  let token: string;
  let client: OpenAI;

  beforeAll(async () => {
    [upstream, gemini] = await Promise.all([new OpenAIUpstream().start(), new GeminiUpstream().start()]);
    gw = await startTestGateway({
      upstreamUrl: upstream.url,
      config: {
        backends: { google: { type: 'gemini', baseUrl: gemini.url, apiKey: '${TEST_UPSTREAM_KEY}' } },
        models: {
          'gemini-embedder': { backend: 'google', upstreamModel: 'gemini-embedding-001', kind: 'embedding' },
          embedder: { backend: 'standin', upstreamModel: 'text-embedding-3-small', kind: 'embedding' },
          'embedder-failover': {
            kind: 'embedding',
            deployments: [
              { backend: 'standin', upstreamModel: 'status-500' },
              { backend: 'standin', upstreamModel: 'text-embedding-3-small', priority: 1 },
            ],
          },
        },
      },
    });
    ({ token } = await gw.teamToken('embedders'));
    client = gw.openai(token);
  });
  afterAll(async () => {
    await gw.close();
    await Promise.all([upstream.stop(), gemini.stop()]);
  });

  it("answers the SDK's default (base64) request with vectors of the model's dimension, equal inputs giving equal vectors", async () => {
    const result = await client.embeddings.create({
      model: 'embedder',
      input: ['the cat sat', 'a dog ran far', 'the cat sat'],
    });
    expect(result.object).toBe('list');
    expect(result.model).toBe('embedder');
    expect(result.data.map((d) => d.index)).toEqual([0, 1, 2]);
    // The stand-in's vectors (8 dimensions), as float32 went over the wire in base64 and the SDK decoded them.
    const float32 = (text: string) => Array.from(new Float32Array(standInEmbedding(text, 8)));
    expect(result.data.map((d) => d.embedding)).toEqual(
      ['the cat sat', 'a dog ran far', 'the cat sat'].map(float32),
    );
    // The stand-in counts a word a token: 3 + 4 + 3.
    expect(result.usage).toEqual({ prompt_tokens: 10, total_tokens: 10 });
    expect(upstream.last().body).toMatchObject({
      model: 'text-embedding-3-small',
      encoding_format: 'base64',
    });
  });

  it('passes float encoding, dimensions and token-array inputs through', async () => {
    const floats = await client.embeddings.create({
      model: 'embedder',
      input: 'hello world',
      encoding_format: 'float',
      dimensions: 4,
    });
    expect(floats.data[0].embedding).toEqual(standInEmbedding('hello world', 4));
    const tokens = await client.embeddings.create({
      model: 'embedder',
      input: [
        [1, 2, 3],
        [4, 5],
      ],
      encoding_format: 'float',
    });
    // A token array is embedded from its JSON and counted a token an element: 3 + 2.
    expect(tokens.data.map((d) => d.embedding)).toEqual([
      standInEmbedding('[1,2,3]', 8),
      standInEmbedding('[4,5]', 8),
    ]);
    expect(tokens.usage.prompt_tokens).toBe(5);
  });

  it('is accounted: one record per request with endpoint embeddings and the prompt tokens', async () => {
    const { token: own } = await gw.teamToken('embed-usage');
    await gw.openai(own).embeddings.create({ model: 'embedder', input: 'one two three four' });
    const record = await waitForUsageRecord(gw, 'embed-usage');
    expect(record).toMatchObject({
      endpoint: 'embeddings',
      model: 'embedder',
      prompt_tokens: 4,
      completion_tokens: 0,
      total_tokens: 4,
      outcome: 'ok',
      estimated: false,
    });
  });

  it('fails over between deployments like chat', async () => {
    const { data, response } = await client.embeddings
      .create({ model: 'embedder-failover', input: 'x y' })
      .withResponse();
    expect(data.data).toHaveLength(1);
    expect(response.headers.get('x-switchyard-attempts')).toBe('2');
  });

  it('the wrong operation for a model is a 400 that says so; bad input is a 400 naming it', async () => {
    const onChat = (await client.embeddings
      .create({ model: 'echo', input: 'x' })
      .catch((e: unknown) => e)) as InstanceType<typeof OpenAI.APIError>;
    expect(onChat).toBeInstanceOf(OpenAI.BadRequestError);
    expect(onChat.message).toMatch(/`echo` is a chat model/);
    const onEmbedder = (await client.chat.completions
      .create({ model: 'embedder', messages: [{ role: 'user', content: 'x' }] })
      .catch((e: unknown) => e)) as InstanceType<typeof OpenAI.APIError>;
    expect(onEmbedder).toBeInstanceOf(OpenAI.BadRequestError);
    expect(onEmbedder.message).toMatch(/`embedder` is an embedding model/);
    for (const input of ['', [], [''], [1.5], [['a']]]) {
      const bad = await gw.asTeam(token, 'POST', '/v1/embeddings', { model: 'embedder', input });
      expect(bad.status).toBe(400);
      expect(bad.body.error).toMatchObject({ param: 'input', type: 'invalid_request_error' });
    }
  });

  describe('on Gemini (batchEmbedContents)', () => {
    it("answers vectors in OpenAI's shape, base64 by default as the SDK asks, floats on request, counted by the gateway", async () => {
      const { token: own } = await gw.teamToken('gemini-embedders');
      const sdk = gw.openai(own);
      const base64 = await sdk.embeddings.create({
        model: 'gemini-embedder',
        input: ['red fox', 'blue whale', 'red fox'],
      });
      // Gemini's floats (6 dimensions), which the gateway sent as float32 in base64 and the SDK decoded.
      const float32 = (text: string) => Array.from(new Float32Array(standInEmbedding(text, 6)));
      expect(base64.data.map((d) => d.embedding)).toEqual(['red fox', 'blue whale', 'red fox'].map(float32));
      expect(gemini.last().body).toEqual({
        requests: ['red fox', 'blue whale', 'red fox'].map((text) => ({
          model: 'models/gemini-embedding-001',
          content: { parts: [{ text }] },
        })),
      });
      const floats = await sdk.embeddings.create({
        model: 'gemini-embedder',
        input: 'red fox',
        encoding_format: 'float',
        dimensions: 3,
      });
      expect(floats.data[0].embedding).toEqual(standInEmbedding('red fox', 3));
      // Gemini reports no count: the gateway's o200k_base estimate of the text.
      expect(floats.usage.prompt_tokens).toBe(countTokens('red fox'));
      const records = await waitForUsageRecords(gw, 'gemini-embedders', 2);
      expect(records[0]).toMatchObject({
        endpoint: 'embeddings',
        model: 'gemini-embedder',
        prompt_tokens: countTokens('red fox'),
        completion_tokens: 0,
        estimated: true,
      });
    });

    it('refuses token arrays, which Gemini cannot embed, with a 400 naming input', async () => {
      const bad = await gw.asTeam(token, 'POST', '/v1/embeddings', {
        model: 'gemini-embedder',
        input: [1, 2, 3],
      });
      expect(bad.status).toBe(400);
      expect(bad.body.error).toMatchObject({
        param: 'input',
        message: expect.stringMatching(/Gemini embeds text/),
      });
    });
  });
});
