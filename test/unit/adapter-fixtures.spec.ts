import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { buildConfig } from '../support/config';
import { AnthropicAdapter } from '../../src/providers/anthropic/anthropic.adapter';
import type { AnthropicBackendConfig } from '../../src/providers/anthropic/anthropic.config';
import { GeminiAdapter } from '../../src/providers/gemini/gemini.adapter';
import type { ProviderAdapter } from '../../src/providers/provider-adapter';
import { bodyOf, decodeAll, sseText } from '../support/stream-decoding';

/**
 * Golden fixtures written from the vendors' documentation (test/fixtures/<family>/): responses,
 * whole stream event sequences and error bodies, each with what the client must get.
 */
const config = buildConfig(
  {
    admin: { apiKey: 'k' },
    backends: { b: { type: 'anthropic', baseUrl: 'http://x/v1', apiKey: 'sk-ant-secret-key-123' } },
  },
  {},
);
const adapters: Record<string, ProviderAdapter> = {
  anthropic: new AnthropicAdapter('b', config.backends.b as AnthropicBackendConfig),
  gemini: new GeminiAdapter('b', config.backends.b),
};

/** A tool call id the gateway made up (random: shared/random-id.ts) reads as `call_<random>` in the fixtures. */
function withMadeUpIds(delta: any): any {
  if (!Array.isArray(delta?.tool_calls)) return delta;
  return {
    ...delta,
    tool_calls: delta.tool_calls.map((call: any) =>
      /^call_[A-Za-z0-9]{24}$/.test(call.id) ? { ...call, id: 'call_<random>' } : call,
    ),
  };
}

function fixtures(family: string): Array<[string, any]> {
  const dir = join(__dirname, '../fixtures', family);
  return readdirSync(dir).map((file) => [file, JSON.parse(readFileSync(join(dir, file), 'utf8'))]);
}

describe.each(Object.keys(adapters))('%s adapter against documented fixtures', (family) => {
  const adapter = adapters[family];
  const all = fixtures(family);

  it.each(all.filter(([, f]) => f.events))('stream %s', async (_file, fixture) => {
    // Each event in a read of its own, as a token-by-token upstream sends them.
    const reads = fixture.events.map((event: any) =>
      sseText([{ event: event.event, data: JSON.stringify(event.data) }]),
    );
    const { steps, error } = await decodeAll(adapter, bodyOf(reads), {
      request: fixture.request ?? { model: 'm', messages: [] },
    });
    expect(error).toBeUndefined();
    // The decoder stops at `done`: only the last event may end the stream.
    expect(steps.map((step: any) => step.done === true)).toEqual(
      fixture.events.map((_: unknown, i: number) => i === fixture.events.length - 1),
    );
    const chunks = steps.flatMap((step: any) => step.chunks);
    const withChoices = chunks.filter((c: any) => c.choices.length > 0);
    // A fixture with several choices names each delta's choice index.
    const named = fixture.expectedDeltas.some((d: any) => 'index' in d);
    expect(
      withChoices.map((c: any) => ({
        ...(named ? { index: c.choices[0].index } : {}),
        delta: withMadeUpIds(c.choices[0].delta),
        finish_reason: c.choices[0].finish_reason,
      })),
    ).toEqual(fixture.expectedDeltas);
    const usageChunk = chunks[chunks.length - 1];
    expect(usageChunk.choices).toEqual([]);
    expect(usageChunk.usage).toEqual(fixture.expectedUsage);
    expect(new Set(chunks.map((c: any) => c.id)).size).toBe(1);
  });

  it.each(all.filter(([, f]) => f.response))('response %s', (_file, fixture) => {
    const completion = adapter.parseResponse(fixture.response);
    expect(completion.object).toBe('chat.completion');
    expect(completion.choices[0]).toEqual(fixture.expectedChoice);
    expect(completion.usage).toEqual(fixture.expectedUsage);
  });

  it.each(all.filter(([, f]) => f.cases))('errors %s', (_file, fixture) => {
    expect(fixture.cases.length).toBeGreaterThan(0);
    for (const c of fixture.cases) {
      const error = adapter.mapError(c.status, JSON.stringify(c.body), c.headers ?? {});
      expect({ status: error.status }).toEqual({ status: c.expect.status });
      if (c.expect.code) expect(error.code).toBe(c.expect.code);
      if (c.expect.type) expect(error.type).toBe(c.expect.type);
      if (c.expect.messageContains) expect(error.message).toContain(c.expect.messageContains);
      if (c.expect.retryAfter) expect(error.headers['retry-after']).toBe(c.expect.retryAfter);
      expect(JSON.stringify(error.toBody())).not.toContain('sk-ant-secret-key-123');
    }
  });
});
