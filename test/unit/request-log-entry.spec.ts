import type { Request } from 'express';
import { AppLogger } from '../../src/common/logging/logger';
import { Exchange } from '../../src/gateway/exchange';
import { InFlightTracker } from '../../src/lifecycle/in-flight.tracker';
import { MetricsService } from '../../src/metrics/metrics.service';
import { RequestLogRedactor } from '../../src/request-log/request-log-redactor';
import { RequestLog, traceIdOf } from '../../src/request-log/request-log.service';
import { RequestLogWriter, type PendingEntry } from '../../src/request-log/request-log-writer';
import { buildConfig } from '../support/config';
import { InMemoryRequestLogStore } from '../support/in-memory-request-log';
import { usageRecord } from '../support/usage-record-fixture';

/** How a finished request becomes its entry (RequestLog.note): the writer is replaced by a list of what it was given. */
function setup(requests: Record<string, unknown> = {}) {
  const config = buildConfig({ admin: { apiKey: 'k' }, logging: { requests } }, {});
  const redactor = new RequestLogRedactor(config);
  const queued: PendingEntry[] = [];
  const writer = new RequestLogWriter(
    new InMemoryRequestLogStore(),
    redactor,
    config,
    new MetricsService(config, new InFlightTracker()),
    new AppLogger('fatal', { write: () => undefined }),
  );
  jest.spyOn(writer, 'enqueue').mockImplementation((pending) => void queued.push(pending));
  return { log: new RequestLog(writer, redactor, config), queued };
}

function exchange(keepsContent = false): Exchange {
  const ex = new Exchange('req-1');
  ex.authenticated({
    tokenId: 'tok1',
    teamId: 'alpha',
    models: ['*'],
    tokenModels: null,
    teamLimits: {},
    tokenLimits: {},
    tokenName: 'laptop',
    owner: { subject: 'u-42', email: 'ana@example.com' },
    keepsContent,
  });
  return ex;
}

const request = (headers: Record<string, string> = {}, body: unknown = { model: 'm' }) =>
  ({ headers, body, ip: '10.1.2.3' }) as unknown as Request;

describe('RequestLog.note', () => {
  it('builds the entry from the usage record and the exchange: who, where, every attempt, timings', () => {
    const { log, queued } = setup();
    const ex = exchange();
    ex.answered({ backend: 'b', upstreamModel: 'u', servedModel: 'm-fallback', attempts: 2 });
    ex.attempted([
      { kind: 'skipped', model: 'm', deployment: 'x/y', reason: 'its backend does not serve embeddings' },
      {
        kind: 'call',
        model: 'm',
        deployment: 'a/u',
        outcome: 'upstream_error',
        status: 500,
        durationMs: 12.5,
        error: 'Upstream said: bad key sk-proj-abcdefghijklmnopqrstuvwxyz123456 for bob@example.com',
      },
      {
        kind: 'call',
        model: 'm-fallback',
        deployment: 'b/u',
        outcome: 'ok',
        status: 200,
        durationMs: 3,
        error: null,
      },
    ]);
    const record = usageRecord('rec-1', {
      backend: 'b',
      upstreamModel: 'u',
      costNanos: 1234,
      cachedTokens: 2,
      cacheWriteTokens: 7,
      cacheWrite1hTokens: 3,
    });
    log.note(ex, record, request());
    expect(queued).toHaveLength(1);
    const { entry, content } = queued[0];
    expect(content).toBeUndefined();
    expect(entry).toMatchObject({
      id: 'rec-1',
      requestId: 'q-rec-1',
      team: 'alpha',
      token: { id: 'tok1', name: 'laptop' },
      person: { subject: 'u-42', email: 'ana@example.com' },
      endpoint: 'chat.completions',
      model: 'm',
      servedModel: 'm-fallback',
      deployment: 'b/u',
      status: 200,
      outcome: 'ok',
      errorCode: null,
      usage: {
        prompt: 10,
        completion: 5,
        reasoning: 0,
        cached: 2,
        cacheWrite: 7,
        cacheWrite1h: 3,
        estimated: false,
      },
      costNanos: 1234,
      traceId: null,
      clientAddress: '10.1.2.3',
      contentKept: false,
      ttfbMs: null,
    });
    expect(entry.attempts[0]).toEqual({
      kind: 'skipped',
      model: 'm',
      deployment: 'x/y',
      reason: 'its backend does not serve embeddings',
    });
    // An upstream's error may quote a key or the prompt: redacted before it is kept.
    expect(entry.attempts[1]).toMatchObject({
      error: 'Upstream said: bad key [api_key] for [email]',
      status: 500,
    });
    expect(entry.attempts[2]).toMatchObject({ outcome: 'ok', error: null });
    expect(Date.parse(entry.at)).toBeLessThanOrEqual(Date.now());
  });

  it('queues the request body and the answer only for a caller whose team keeps content', () => {
    const { log, queued } = setup();
    const kept = exchange(true);
    kept.answerForLog([{ role: 'assistant', content: 'hi' }]);
    const body = { model: 'm', messages: [{ role: 'user', content: 'hello' }] };
    log.note(kept, usageRecord('with'), request({}, body));
    log.note(exchange(false), usageRecord('without'), request({}, body));
    expect(queued[0]).toMatchObject({
      entry: { contentKept: true },
      content: { request: body, response: [{ role: 'assistant', content: 'hi' }] },
    });
    expect(queued[1].content).toBeUndefined();
  });

  it('keeps nothing when the request log is off, or for a request no one was authenticated for', () => {
    const off = setup({ enabled: false });
    off.log.note(exchange(), usageRecord('r'), request());
    expect(off.queued).toEqual([]);
    const on = setup();
    on.log.note(new Exchange('anonymous'), usageRecord('r'), request());
    expect(on.queued).toEqual([]);
  });

  it('takes the trace id of a valid traceparent only', () => {
    const id = '4bf92f3577b34da6a3ce929d0e0e4736';
    expect(traceIdOf(`00-${id}-00f067aa0ba902b7-01`)).toBe(id);
    expect(traceIdOf(` 00-${id}-00f067aa0ba902b7-00 `)).toBe(id);
    expect(traceIdOf(`00-${'0'.repeat(32)}-00f067aa0ba902b7-01`)).toBeNull();
    expect(traceIdOf(`00-${id.toUpperCase()}-00f067aa0ba902b7-01`)).toBeNull();
    expect(traceIdOf(`00-${id}-00f067aa0ba902b7`)).toBeNull();
    expect(traceIdOf(undefined)).toBeNull();
    expect(traceIdOf(['a', 'b'])).toBeNull();
  });
});
