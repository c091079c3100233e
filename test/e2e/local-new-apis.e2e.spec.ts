import Anthropic from '@anthropic-ai/sdk';
import { EMBEDDING_MODEL, ensureEmbeddingModel, localBackend } from '../support/local-model';
import { OpenAIUpstream } from '../support/openai-upstream';
import { startTestGateway, type TestGateway } from '../support/test-gateway';
import { waitForUsageRecord } from '../support/usage';

/**
 * The default config's offline models through the newer APIs: Anthropic's Messages API and OpenAI's Responses API
 * translated for the real local chat model (SmolLM2), and POST /v1/embeddings on the real local embedding model (all-MiniLM-L6-v2 GGUF,
 * fetched and converted by scripts/fetch-model.py as the quickstart does).
 */
describe('local models through Messages, Responses and embeddings (real models)', () => {
  jest.setTimeout(240_000);
  let upstream: OpenAIUpstream;
  let gw: TestGateway;
  let token: string;
  let anthropic: Anthropic;

  beforeAll(async () => {
    ensureEmbeddingModel();
    upstream = await new OpenAIUpstream().start();
    gw = await startTestGateway({
      upstreamUrl: upstream.url,
      config: {
        backends: {
          local: localBackend(),
          'local-embed': {
            type: 'local',
            local: {
              modelPath: EMBEDDING_MODEL,
              embedding: true,
              parallel: 1,
              queueSize: 8,
              contextSize: 512,
              threads: 1,
            },
          },
        },
        models: {
          smollm2: { backend: 'local', upstreamModel: 'SmolLM2-135M-Instruct', thinking: 'native' },
          minilm: { backend: 'local-embed', upstreamModel: 'all-MiniLM-L6-v2', kind: 'embedding' },
        },
      },
    });
    ({ token } = await gw.teamToken('local-new-apis'));
    anthropic = new Anthropic({ apiKey: token, baseURL: gw.url, maxRetries: 0 });
  });
  afterAll(async () => {
    await gw?.close();
    await upstream?.stop();
  });

  describe('Messages to the local chat model (translated)', () => {
    it('answers a Message with the model tokenizer counts, accounted as messages', async () => {
      // A team of its own, so the one record it polls for is this request's.
      const { token: own } = await gw.teamToken('local-new-apis-message');
      const message = await new Anthropic({ apiKey: own, baseURL: gw.url, maxRetries: 0 }).messages.create(
        // temperature left the SDK's types (deprecated on the newest Claude models) but is still an API field.
        {
          model: 'smollm2',
          max_tokens: 40,
          temperature: 0,
          system: 'Answer in one sentence.',
          messages: [{ role: 'user', content: 'What is the capital of France?' }],
        } as Anthropic.MessageCreateParamsNonStreaming,
      );
      expect(message).toMatchObject({ type: 'message', role: 'assistant', model: 'smollm2' });
      expect(message.content[0]).toMatchObject({ type: 'text', text: expect.stringMatching(/Paris/) });
      expect(['end_turn', 'max_tokens']).toContain(message.stop_reason);
      expect(message.usage.input_tokens).toBeGreaterThan(10);
      expect(message.usage.output_tokens).toBeGreaterThan(0);
      const record = await waitForUsageRecord(gw, 'local-new-apis-message');
      expect(record).toMatchObject({
        endpoint: 'messages',
        model: 'smollm2',
        prompt_tokens: message.usage.input_tokens,
        completion_tokens: message.usage.output_tokens,
        estimated: false,
        // A local model's price is a known 0 (config/prices.json), not an unknown one.
        cost: 0,
        cost_nanos: 0,
      });
    });

    it('streams, with the thinking hint Claude Code sends dropped for a model that cannot think', async () => {
      const stream = anthropic.messages.stream({
        model: 'smollm2',
        max_tokens: 2000,
        thinking: { type: 'adaptive' } as never,
        messages: [{ role: 'user', content: 'Name a color.' }],
      });
      const events: string[] = [];
      stream.on('streamEvent', (event) => events.push(event.type));
      const message = await stream.finalMessage();
      expect(message.content.map((block) => block.type)).toEqual(['text']);
      expect((message.content[0] as { text: string }).text.length).toBeGreaterThan(0);
      expect(events[0]).toBe('message_start');
      expect(events.slice(-2)).toEqual(['message_delta', 'message_stop']);
      expect(message.usage.output_tokens).toBeGreaterThan(0);
    });
  });

  describe('Responses to the local chat model (translated)', () => {
    it('answers and streams a Response, with the model tokenizer counts', async () => {
      const client = gw.openai(token);
      const response = await client.responses.create({
        model: 'smollm2',
        instructions: 'Answer in one sentence.',
        input: 'What is the capital of France?',
        max_output_tokens: 40,
        temperature: 0,
      });
      expect(response.status).toMatch(/completed|incomplete/);
      expect(response.output_text).toMatch(/Paris/);
      expect(response.usage!.input_tokens).toBeGreaterThan(10);
      const stream = client.responses.stream({
        model: 'smollm2',
        input: 'Name a color.',
        max_output_tokens: 20,
        reasoning: { effort: 'low' },
      });
      const final = await stream.finalResponse();
      expect(final.output.map((item) => item.type)).toEqual(['message']);
      expect(final.output_text.length).toBeGreaterThan(0);
      expect(final.usage!.output_tokens).toBeGreaterThan(0);
    });
  });

  describe('embeddings on the local embedding model', () => {
    const cosine = (a: number[], b: number[]) => a.reduce((sum, x, i) => sum + x * b[i], 0);

    it('answers the openai SDK (base64, its default) with normalised 384-dimension vectors that mean something', async () => {
      const { token: own } = await gw.teamToken('local-embedders');
      const client = gw.openai(own);
      const texts = [
        'A man is eating food.',
        'A man is eating a piece of bread.',
        'The new movie is awesome.',
        'A man is eating food.',
      ];
      const result = await client.embeddings.create({ model: 'minilm', input: texts });
      expect(result.model).toBe('minilm');
      const vectors = result.data.map((d) => d.embedding);
      for (const vector of vectors) {
        expect(vector).toHaveLength(384);
        expect(Math.hypot(...vector)).toBeCloseTo(1, 3);
      }
      expect(cosine(vectors[0], vectors[3])).toBeCloseTo(1, 5);
      expect(cosine(vectors[0], vectors[1])).toBeGreaterThan(0.5);
      expect(cosine(vectors[0], vectors[2])).toBeLessThan(0.2);
      // The model's own WordPiece tokens: "a man is eating food ." is 6, the four inputs 6 + 9 + 6 + 6.
      expect(result.usage).toEqual({ prompt_tokens: 27, total_tokens: 27 });
      const record = await waitForUsageRecord(gw, 'local-embedders');
      expect(record).toMatchObject({
        endpoint: 'embeddings',
        model: 'minilm',
        backend: 'local-embed',
        prompt_tokens: 27,
        completion_tokens: 0,
        estimated: false,
      });

      const floats = await client.embeddings.create({
        model: 'minilm',
        input: 'A man is eating food.',
        encoding_format: 'float',
        dimensions: 384,
      });
      for (let i = 0; i < 384; i++) expect(floats.data[0].embedding[i]).toBeCloseTo(vectors[0][i], 5);
    });

    it('refuses what it cannot do with 400s naming the field: other dimensions, an input longer than its context', async () => {
      const shorter = await gw.asTeam(token, 'POST', '/v1/embeddings', {
        model: 'minilm',
        input: 'x',
        dimensions: 128,
      });
      expect(shorter.status).toBe(400);
      expect(shorter.body.error).toMatchObject({ param: 'dimensions' });
      const long = await gw.asTeam(token, 'POST', '/v1/embeddings', {
        model: 'minilm',
        input: 'word '.repeat(600),
      });
      expect(long.status).toBe(400);
      expect(long.body.error).toMatchObject({ param: 'input', code: 'context_length_exceeded' });
      const chat = await gw.asTeam(token, 'POST', '/v1/chat/completions', {
        model: 'minilm',
        messages: [{ role: 'user', content: 'x' }],
      });
      expect(chat.status).toBe(400);
    });
  });
});
