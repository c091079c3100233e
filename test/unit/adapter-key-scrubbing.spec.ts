import { BackendConfig } from '../../src/config/config.schema';
import type { GatewayException } from '../../src/core/errors/gateway.exception';
import { AnthropicAdapter } from '../../src/providers/anthropic/anthropic.adapter';
import { GeminiAdapter } from '../../src/providers/gemini/gemini.adapter';
import { OpenAIAdapter } from '../../src/providers/openai/openai.adapter';
import type { ProviderAdapter } from '../../src/providers/provider-adapter';
import { bodyOf, decodeAll, sseText } from '../support/stream-decoding';

/**
 * Every adapter scrubs the backend's own keys from what its vendor said, in error answers and in a stream's in-band
 * error. The keys here have no vendor prefix (`sk-...`), so the generic "anything key-shaped" rule in scrub() does
 * not hide them: only the adapter passing its backend's secrets does.
 */
const API_KEY = 'ant9f8e7d6c5b4a39281706zz';
const HEADER_KEY = 'hdr0a1b2c3d4e5f6a7b8c9d0';
const config = (type: string) =>
  Object.assign(new BackendConfig(), {
    type,
    baseUrl: 'http://vendor.invalid/v1',
    apiKey: API_KEY,
    anthropicVersion: '2023-06-01',
    headers: { 'x-goog-api-key': HEADER_KEY },
  });

const adapters: Array<[string, ProviderAdapter, (message: string) => unknown]> = [
  [
    'anthropic',
    new AnthropicAdapter('b', config('anthropic')),
    (message) => ({ type: 'error', error: { type: 'invalid_request_error', message } }),
  ],
  [
    'gemini',
    new GeminiAdapter('b', config('gemini')),
    (message) => ({ error: { code: 400, message, status: 'INVALID_ARGUMENT' } }),
  ],
  [
    'openai',
    new OpenAIAdapter('b', config('openai')),
    (message) => ({ error: { message, type: 'invalid_request_error', param: null, code: null } }),
  ],
];

const leaks = (error: GatewayException) =>
  JSON.stringify({ body: error.toBody(), upstream: error.upstream, headers: error.headers });

describe.each(adapters)('%s adapter scrubs its backend keys', (_family, adapter, errorBody) => {
  const said = `The key ${API_KEY} (or ${HEADER_KEY}) is not allowed here`;

  it.each([400, 401, 429, 500])('from an HTTP %i answer', (status) => {
    const error = adapter.mapError(status, JSON.stringify(errorBody(said)), {});
    expect(leaks(error)).not.toContain(API_KEY);
    expect(leaks(error)).not.toContain(HEADER_KEY);
    // The rest of the vendor's words survive (scrubbing is not just dropping the message).
    expect(error.upstream?.message).toBe('The key [redacted] (or [redacted]) is not allowed here');
  });

  it('from an in-band stream error', async () => {
    const body = bodyOf([sseText([{ event: 'error', data: JSON.stringify(errorBody(said)) }])]);
    const thrown = (await decodeAll(adapter, body)).error as GatewayException | undefined;
    expect(thrown).toBeDefined();
    expect(leaks(thrown!)).not.toContain(API_KEY);
    expect(thrown!.upstream?.message).toBe('The key [redacted] (or [redacted]) is not allowed here');
  });
});
