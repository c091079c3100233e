import {
  counterField,
  counterIncrements,
  parseCounterField,
  recordFields,
  recordView,
  withCost,
  type UsageRecord,
} from '../../src/usage/usage-record';

const record: UsageRecord = {
  id: 'r1',
  at: '2026-11-21T10:00:00.000Z',
  requestId: 'q1',
  team: 't',
  tokenId: '0123456789abcdef',
  model: 'meta-llama/Llama|3',
  modelLabel: 'meta-llama/Llama|3',
  backend: 'b',
  upstreamModel: 'u',
  servedModel: 'meta-llama/Llama|3',
  attempts: 2,
  endpoint: 'chat.completions',
  stream: true,
  promptTokens: 10,
  completionTokens: 5,
  reasoningTokens: 2,
  status: 200,
  outcome: 'aborted',
  errorCode: '',
  latencyMs: 12.5,
  estimated: true,
  cachedTokens: 0,
  cacheWriteTokens: 0,
  cacheWrite1hTokens: 0,
  cacheHit: false,
  costNanos: 0,
  costEstimated: false,
};

describe('usage records', () => {
  it('counts prompt-cache reads and writes in the day counters (the usage API sums them)', () => {
    const increments = Object.fromEntries(
      counterIncrements({ ...record, promptTokens: 1000, cachedTokens: 700, cacheWriteTokens: 200 }),
    );
    expect(increments).toMatchObject({
      [counterField('cache_read', record.tokenId, record.model)]: 700,
      [counterField('cache_write', record.tokenId, record.model)]: 200,
    });
    // None when there were none (a field per record would only grow the hash).
    expect(counterIncrements(record).map(([field]) => field.split('|')[0])).not.toContain('cache_read');
  });

  it("a priced record carries its no-cache baseline (the metrics' savings), an unpriced one none", () => {
    const counts = {
      ...record,
      estimated: false,
      promptTokens: 1000,
      cachedTokens: 900,
      completionTokens: 10,
      reasoningTokens: 0,
    };
    const price = { input: 3, output: 15, cachedInput: 0.3 };
    expect(withCost(counts, price)).toMatchObject({
      costNanos: (100 * 3 + 900 * 0.3 + 10 * 15) * 1000,
      costWithoutCacheNanos: (1000 * 3 + 10 * 15) * 1000,
    });
    expect(withCost({ ...counts, cachedTokens: 0 }, price)).toMatchObject({
      costNanos: (1000 * 3 + 10 * 15) * 1000,
      costWithoutCacheNanos: (1000 * 3 + 10 * 15) * 1000,
    });
    expect(withCost(counts, undefined)).not.toHaveProperty('costWithoutCacheNanos');
  });

  it('counter fields round-trip even when a model name contains the separator', () => {
    expect(parseCounterField(counterField('prompt', record.tokenId, record.model))).toEqual({
      metric: 'prompt',
      tokenId: record.tokenId,
      model: 'meta-llama/Llama|3',
      endpoint: 'chat.completions',
    });
    expect(parseCounterField('garbage')).toBeNull();
  });

  it('counters carry the endpoint; chat completions keep the format counters had before endpoints existed', () => {
    expect(counterField('prompt', 'tok', 'gpt-4o')).toBe('prompt|tok|gpt-4o');
    expect(parseCounterField('prompt|tok|gpt-4o')).toEqual({
      metric: 'prompt',
      tokenId: 'tok',
      model: 'gpt-4o',
      endpoint: 'chat.completions',
    });
    const messages = counterField('prompt', 'tok', 'a|b', 'messages');
    // The endpoint after a unit separator, which no model name or endpoint holds.
    expect(messages).toBe('prompt|tok|a|b\u001fmessages');
    expect(parseCounterField(messages)).toEqual({
      metric: 'prompt',
      tokenId: 'tok',
      model: 'a|b',
      endpoint: 'messages',
    });
    expect(counterIncrements({ ...record, endpoint: 'embeddings' })[0]).toEqual([
      counterField('requests', record.tokenId, record.model, 'embeddings'),
      1,
    ]);
  });

  it('one record adds requests, its outcome, its tokens, the estimated flag and, when it spent tokens at a known price (0 here), cost_known', () => {
    const at = (metric: any) => counterField(metric, record.tokenId, record.model);
    expect(counterIncrements(record)).toEqual([
      [at('requests'), 1],
      [at('aborted'), 1],
      [at('prompt'), 10],
      [at('completion'), 5],
      [at('reasoning'), 2],
      [at('estimated'), 1],
      [at('cost_known'), 1],
    ]);
    expect(
      counterIncrements({
        ...record,
        promptTokens: 0,
        completionTokens: 0,
        reasoningTokens: 0,
        estimated: false,
        outcome: 'ok',
      }),
    ).toEqual([
      [at('requests'), 1],
      [at('ok'), 1],
    ]);
  });

  it('the stream entry reads back with numbers, booleans and total = prompt + completion', () => {
    const view = recordView('1-0', recordFields(record));
    expect(view).toMatchObject({
      entry_id: '1-0',
      attempts: 2,
      served_model: 'meta-llama/Llama|3',
      prompt_tokens: 10,
      completion_tokens: 5,
      total_tokens: 15,
      stream: true,
      estimated: true,
      error_code: null,
      latency_ms: 12.5,
    });
  });
});
