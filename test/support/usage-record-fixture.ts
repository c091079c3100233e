import type { UsageRecord } from '../../src/usage/usage-record';

/** A plain successful chat-completion usage record (10 + 5 tokens, team alpha), with `over` on top. */
export function usageRecord(id: string, over: Partial<UsageRecord> = {}): UsageRecord {
  return {
    id,
    at: '2026-11-21T10:00:00.000Z',
    requestId: `q-${id}`,
    team: 'alpha',
    tokenId: '0123456789abcdef',
    model: 'm',
    modelLabel: 'm',
    backend: 'b',
    upstreamModel: 'u',
    servedModel: 'm',
    attempts: 1,
    endpoint: 'chat.completions',
    stream: false,
    promptTokens: 10,
    completionTokens: 5,
    reasoningTokens: 0,
    status: 200,
    outcome: 'ok',
    errorCode: '',
    latencyMs: 1,
    estimated: false,
    cachedTokens: 0,
    cacheWriteTokens: 0,
    cacheWrite1hTokens: 0,
    costNanos: 0,
    costEstimated: false,
    cacheHit: false,
    ...over,
  };
}
