import type { RequestLogEntry } from '../../src/request-log/request-log-entry';

/** A request log entry: a plain successful chat request, with `over` changed. */
export function logEntry(id: string, over: Partial<RequestLogEntry> = {}): RequestLogEntry {
  return {
    id,
    requestId: `req-${id}`,
    at: '2026-11-27T10:00:00.000Z',
    team: 'a',
    token: { id: 'tok', name: null },
    person: null,
    endpoint: 'chat.completions',
    stream: false,
    model: 'echo',
    servedModel: 'echo',
    deployment: 'standin/echo',
    attempts: [],
    status: 200,
    outcome: 'ok',
    errorCode: null,
    latencyMs: 1,
    ttfbMs: 1,
    usage: {
      prompt: 1,
      completion: 1,
      reasoning: 0,
      cached: 0,
      cacheWrite: 0,
      cacheWrite1h: 0,
      estimated: false,
    },
    costNanos: null,
    traceId: null,
    clientAddress: null,
    contentKept: false,
    cacheHit: false,
    ...over,
  };
}
