import { sendInParts } from '../../src/providers/shared/split-calls';
import { predictParts } from '../../src/providers/vertex/vertex.embeddings';
import type { UpstreamResponse } from '../../src/providers/upstream-client';

const answer = (status: number, value: unknown, read: string[] = []): UpstreamResponse => ({
  status,
  headers: {},
  body: {
    json: () => Promise.resolve(value),
    text: () => {
      read.push(JSON.stringify(value));
      return Promise.resolve(JSON.stringify(value));
    },
    async *[Symbol.asyncIterator]() {},
  },
});

describe('one request sent as several calls (providers/shared/split-calls.ts)', () => {
  it('keeps at most four calls in flight and answers in the order of the bodies, whatever order they end in', async () => {
    let inFlight = 0;
    let most = 0;
    const bodies = Array.from({ length: 10 }, (_, i) => String(i));
    const sent = await sendInParts(bodies, async (body) => {
      most = Math.max(most, ++inFlight);
      await new Promise((resolve) => setTimeout(resolve, (10 - Number(body)) * 2)); // the later, the sooner
      inFlight--;
      return answer(200, { body });
    });
    expect(most).toBe(4);
    expect(sent).toEqual({ answers: bodies.map((body) => ({ body })) });
  });

  it('the first failure is the answer; its turn-mates are read to their end, and no later turn is sent', async () => {
    const sentBodies: string[] = [];
    const drained: string[] = [];
    const refused = answer(429, { error: 'RESOURCE_EXHAUSTED' });
    const sent = await sendInParts(['a', 'b', 'c', 'd', 'e'], (body) => {
      sentBodies.push(body);
      return Promise.resolve(body === 'b' ? refused : answer(200, { body }, drained));
    });
    expect(sent).toEqual({ failed: refused });
    expect(sentBodies).toEqual(['a', 'b', 'c', 'd']);
    expect(drained.sort()).toEqual(['{"body":"a"}', '{"body":"c"}', '{"body":"d"}']);
  });
});

describe("Vertex :predict parts (the model's instance cap, 20,000 tokens a call)", () => {
  const path = (model: string) =>
    `/v1/projects/p/locations/us-central1/publishers/google/models/${model}:predict`;
  const body = (texts: string[]) =>
    JSON.stringify({
      instances: texts.map((content) => ({ content })),
      parameters: { outputDimensionality: 4 },
    });
  const contents = (parts: string[] | undefined) =>
    parts?.map((part) =>
      (JSON.parse(part) as { instances: Array<{ content: string }> }).instances.map((i) => i.content),
    );

  it('a call one call can take goes as it is; other paths are not touched', () => {
    expect(predictParts(path('text-embedding-005'), body(['a', 'b']))).toBeUndefined();
    expect(predictParts(path('gemini-embedding-001'), body(['a']))).toBeUndefined();
    expect(
      predictParts(path('gemini-2.5-flash').replace(':predict', ':generateContent'), body(['a', 'b'])),
    ).toBeUndefined();
  });

  it('gemini-embedding-001: one instance a call, each with the parameters', () => {
    const parts = predictParts(path('gemini-embedding-001'), body(['a', 'b', 'c']));
    expect(contents(parts)).toEqual([['a'], ['b'], ['c']]);
    expect(JSON.parse(parts![0])).toEqual({
      instances: [{ content: 'a' }],
      parameters: { outputDimensionality: 4 },
    });
  });

  it('text-embedding-005: 250 a call, and never over 20,000 bytes (+2 a text) in one', () => {
    const short = Array.from({ length: 251 }, (_, i) => `t${i}`);
    expect(contents(predictParts(path('text-embedding-005'), body(short)))?.map((p) => p.length)).toEqual([
      250, 1,
    ]);
    const long = Array.from({ length: 5 }, (_, i) => `${i}`.padEnd(6_000, 'x'));
    expect(contents(predictParts(path('text-embedding-005'), body(long)))?.map((p) => p.length)).toEqual([
      3, 2,
    ]);
    // A text over the cap on its own goes alone, for Vertex to truncate or refuse.
    const huge = ['a', 'x'.repeat(30_000), 'b'];
    expect(contents(predictParts(path('text-embedding-005'), body(huge)))?.map((p) => p.length)).toEqual([
      1, 1, 1,
    ]);
  });
});
