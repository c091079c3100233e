import { Readable } from 'node:stream';
import { ModelConfig } from '../../src/config/config.schema';
import type { ChatRequest } from '../../src/core/chat-request';
import { GatewayException } from '../../src/core/errors/gateway.exception';
import type { ChatCompletionChunk } from '../../src/core/openai-types';
import { AzureAdapter } from '../../src/providers/azure/azure.adapter';
import { AzureBackendConfig } from '../../src/providers/azure/azure.config';
import { azurePath } from '../../src/providers/azure/azure-routes';
import type { UpstreamBody } from '../../src/providers/upstream-client';
import { buildConfig } from '../support/config';

const KEY = 'azure-key-0123456789abcdef';
const backend = (extra: Partial<AzureBackendConfig> = {}) =>
  Object.assign(new AzureBackendConfig(), {
    type: 'azure',
    baseUrl: 'https://res.openai.azure.com',
    apiKey: KEY,
    ...extra,
  });
const target = (upstreamModel: string) => ({
  upstreamModel,
  model: Object.assign(new ModelConfig(), { backend: 'az', upstreamModel }),
});
const chat = { model: 'gpt', messages: [{ role: 'user', content: 'hi' }] } as unknown as ChatRequest;

function sse(events: unknown[]): UpstreamBody {
  const text = events
    .map((event) => `data: ${typeof event === 'string' ? event : JSON.stringify(event)}\n\n`)
    .join('');
  const readable = Readable.from([Buffer.from(text)]);
  return Object.assign(readable, { json: () => Promise.resolve({}), text: () => Promise.resolve(text) });
}

async function chunksOf(adapter: AzureAdapter, events: unknown[]): Promise<ChatCompletionChunk[]> {
  const out: ChatCompletionChunk[] = [];
  for await (const batch of adapter.decodeStream(sse(events), { request: chat }))
    for (const step of batch) out.push(...step.chunks);
  return out;
}

describe('Azure routes', () => {
  it('v1: /openai/v1/<operation>, the deployment in the body', () => {
    expect(azurePath('v1', '/chat/completions', 'gpt-4o-prod')).toBe('/openai/v1/chat/completions');
    expect(azurePath('v1', '/embeddings', 'emb')).toBe('/openai/v1/embeddings');
    expect(azurePath('v1', '/responses', 'gpt-4o-prod')).toBe('/openai/v1/responses');
  });

  it('a dated version: the deployment in the path (escaped) and ?api-version=', () => {
    expect(azurePath('2024-10-21', '/chat/completions', 'gpt-4o prod/eu')).toBe(
      '/openai/deployments/gpt-4o%20prod%2Feu/chat/completions?api-version=2024-10-21',
    );
    expect(azurePath('2025-04-01-preview', '/embeddings', 'emb')).toBe(
      '/openai/deployments/emb/embeddings?api-version=2025-04-01-preview',
    );
  });

  it('the adapter builds each call at its route, with no credential of its own (the client adds it)', () => {
    const v1 = new AzureAdapter('az', backend());
    const call = v1.buildRequest(chat, target('gpt-4o-prod'), true);
    expect(call.path).toBe('/openai/v1/chat/completions');
    expect(JSON.parse(String(call.body))).toMatchObject({ model: 'gpt-4o-prod', stream: true });
    expect(call.headers.authorization).toBeUndefined();
    expect(call.headers['api-key']).toBeUndefined();
    expect(v1.nativeApis).toEqual(['responses']);
    const dated = new AzureAdapter('az', backend({ apiVersion: '2024-10-21' }));
    expect(dated.buildRequest(chat, target('gpt-4o-prod'), false).path).toBe(
      '/openai/deployments/gpt-4o-prod/chat/completions?api-version=2024-10-21',
    );
    expect(dated.buildEmbeddingRequest({ model: 'e', input: 'x' }, target('emb')).path).toBe(
      '/openai/deployments/emb/embeddings?api-version=2024-10-21',
    );
    // Responses only on v1: a dated backend's Responses requests are translated to chat.
    expect(dated.nativeApis).toEqual([]);
  });
});

describe('Azure config', () => {
  const config = (azure: Record<string, unknown>) =>
    buildConfig(
      {
        admin: { apiKey: 'k' },
        backends: { az: { type: 'azure', baseUrl: 'https://r.openai.azure.com', ...azure } },
      },
      {},
    );

  it('defaults to v1 and takes dated versions; refuses anything else', () => {
    expect((config({ apiKey: 'k' }).backends.az as AzureBackendConfig).apiVersion).toBe('v1');
    expect(
      (config({ apiKey: 'k', apiVersion: '2025-04-01-preview' }).backends.az as AzureBackendConfig)
        .apiVersion,
    ).toBe('2025-04-01-preview');
    expect(() => config({ apiKey: 'k', apiVersion: 'latest' })).toThrow(
      /backends\.az\.apiVersion: must be v1 or a dated version/,
    );
  });

  it('Entra: its three fields, an https authority, and not together with a key', () => {
    const entra = { tenantId: 't', clientId: 'c', clientSecret: 's' };
    expect((config({ entra }).backends.az as AzureBackendConfig).entra).toMatchObject(entra);
    expect(() => config({ entra: { tenantId: 't', clientId: 'c' } })).toThrow(/entra\.clientSecret/);
    expect(() => config({ entra: { ...entra, authorityHost: 'http://login.example' } })).toThrow(
      /entra\.authorityHost/,
    );
    expect(() => config({ entra, apiKey: 'k' })).toThrow(/give either apiKey or entra, not both/);
  });
});

describe('Azure content filter and errors', () => {
  const adapter = new AzureAdapter('az', backend());
  const filter = { hate: { filtered: false, severity: 'safe' } };
  const chunk = (choice: Record<string, unknown>) => ({
    id: 'chatcmpl-1',
    object: 'chat.completion.chunk',
    created: 1,
    model: 'gpt-4o',
    choices: [choice],
  });

  it("strips the filter's annotations from a stream and drops the events that are nothing else", async () => {
    const chunks = await chunksOf(adapter, [
      {
        choices: [],
        created: 0,
        id: '',
        model: '',
        object: '',
        prompt_filter_results: [{ prompt_index: 0, content_filter_results: filter }],
      },
      chunk({
        content_filter_results: {},
        delta: { role: 'assistant', content: '' },
        finish_reason: null,
        index: 0,
      }),
      chunk({ content_filter_results: filter, delta: { content: 'Hi' }, finish_reason: null, index: 0 }),
      {
        choices: [
          {
            content_filter_offsets: { check_offset: 2 },
            content_filter_results: filter,
            finish_reason: null,
            index: 0,
          },
        ],
        created: 0,
        id: '',
        model: '',
        object: '',
      },
      chunk({
        content_filter_results: { hate: { filtered: true, severity: 'high' } },
        finish_reason: 'content_filter',
        index: 0,
      }),
      '[DONE]',
    ]);
    expect(chunks.map((c) => c.choices)).toEqual([
      [{ delta: { role: 'assistant', content: '' }, finish_reason: null, index: 0 }],
      [{ delta: { content: 'Hi' }, finish_reason: null, index: 0 }],
      [{ delta: {}, finish_reason: 'content_filter', index: 0 }],
    ]);
    expect(JSON.stringify(chunks)).not.toMatch(/filter_(results|offsets)/);
  });

  it('strips them from a whole completion, keeping finish_reason content_filter', () => {
    const completion = adapter.parseResponse({
      id: 'chatcmpl-1',
      object: 'chat.completion',
      created: 1,
      model: 'gpt-4o',
      prompt_filter_results: [{ prompt_index: 0, content_filter_results: filter }],
      choices: [
        {
          index: 0,
          finish_reason: 'content_filter',
          message: { role: 'assistant', content: '' },
          content_filter_results: filter,
        },
      ],
    });
    expect(completion).not.toHaveProperty('prompt_filter_results');
    expect(completion.choices[0]).toEqual({
      index: 0,
      finish_reason: 'content_filter',
      message: { role: 'assistant', content: '' },
    });
  });

  it("a prompt refused by the filter is the client's 400 content_filter, not the backend's failure", () => {
    const error = adapter.mapError(
      400,
      JSON.stringify({
        error: {
          message:
            "The response was filtered due to the prompt triggering Azure OpenAI's content management policy.",
          type: null,
          param: 'prompt',
          code: 'content_filter',
          status: 400,
          innererror: { code: 'ResponsibleAIPolicyViolation', content_filter_result: filter },
        },
      }),
      {},
    );
    expect(error).toMatchObject({
      status: 400,
      code: 'invalid_request',
      wireCode: 'content_filter',
      param: 'prompt',
      deploymentFault: false,
    });
    expect(error.toBody().error).toMatchObject({ type: 'invalid_request_error', code: 'content_filter' });
  });

  it("Azure's 429 is a rate limit with its Retry-After; its numeric codes are not passed on as codes", () => {
    const error = adapter.mapError(
      429,
      JSON.stringify({ error: { code: '429', message: 'Please retry after 6 seconds.' } }),
      {
        'retry-after': '6',
        'retry-after-ms': '5500',
      },
    );
    expect(error).toMatchObject({
      status: 429,
      code: 'rate_limit_exceeded',
      wireCode: 'rate_limit_exceeded',
    });
    expect(error.headers).toEqual({ 'retry-after': '6', 'retry-after-ms': '5500' });
  });

  it('scrubs the key, the client secret and any access token from errors, in-band ones included', async () => {
    const entra = new AzureAdapter(
      'az',
      backend({
        apiKey: undefined,
        entra: { tenantId: 't', clientId: 'c', clientSecret: 'client-secret-value-42' },
      }),
    );
    const jwt =
      'eyJ0eXAiOiJKV1QiLCJhbGciOiJIUzI1NiJ9.eyJhdWQiOiJodHRwczovL2NvZ25pdGl2ZXNlcnZpY2VzIn0.c2lnbmF0dXJl';
    const error = entra.mapError(
      400,
      JSON.stringify({ error: { message: `bad ${jwt} and client-secret-value-42` } }),
      {},
    );
    expect(error.message).not.toContain(jwt);
    expect(error.message).not.toContain('client-secret-value-42');
    const inBand = await chunksOf(entra, [
      { error: { message: `token ${jwt} expired`, type: 'server_error' } },
    ]).catch((e: unknown) => e);
    expect(inBand).toBeInstanceOf(GatewayException);
    expect((inBand as GatewayException).message).not.toContain(jwt);
    const keyed = adapter.mapError(
      401,
      JSON.stringify({ error: { code: '401', message: `key ${KEY} refused` } }),
      {},
    );
    expect(JSON.stringify(keyed.toBody())).not.toContain(KEY);
  });
});
