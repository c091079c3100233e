import { buildConfig } from '../support/config';
import { InFlightTracker } from '../../src/lifecycle/in-flight.tracker';
import { MetricsService } from '../../src/metrics/metrics.service';
import type { UsageRecord } from '../../src/usage/usage-record';

const record: UsageRecord = {
  id: 'r',
  at: '2026-11-21T00:00:00.000Z',
  requestId: 'q',
  team: 'research',
  tokenId: '0123456789abcdef',
  model: 'gpt-4o',
  modelLabel: 'gpt-4o',
  backend: 'openai',
  upstreamModel: 'gpt-4o-2024',
  servedModel: 'gpt-4o',
  attempts: 1,
  endpoint: 'chat.completions',
  stream: true,
  promptTokens: 12,
  completionTokens: 30,
  reasoningTokens: 10,
  status: 200,
  outcome: 'ok',
  errorCode: '',
  latencyMs: 1500,
  estimated: false,
  cachedTokens: 0,
  cacheWriteTokens: 0,
  cacheWrite1hTokens: 0,
  cacheHit: false,
  costNanos: 0,
  costEstimated: false,
};

function metrics(tokenLabel = false): MetricsService {
  return new MetricsService(
    buildConfig({ admin: { apiKey: 'k' }, metrics: { tokenLabel } }, {}),
    new InFlightTracker(),
  );
}

async function values(
  service: MetricsService,
  name: string,
): Promise<Array<{ labels: Record<string, string | number>; value: number; metricName?: string }>> {
  const metric = (await service.registry.getMetricsAsJSON()).find((m) => m.name === name);
  return (metric?.values ?? []) as any;
}

describe('MetricsService', () => {
  it('counts cache reads and writes as token types of their own (parts of prompt)', async () => {
    const service = metrics();
    service.observeRequest(
      { ...record, promptTokens: 1000, cachedTokens: 800, cacheWriteTokens: 150, cacheWrite1hTokens: 50 },
      { total: 1 },
    );
    const byType = Object.fromEntries(
      (await values(service, 'switchyard_tokens_total')).map((v) => [v.labels.type, v.value]),
    );
    expect(byType).toMatchObject({ prompt: 1000, cache_read: 800, cache_write: 150 });
  });

  it('counts what the requests would have cost without the prompt cache beside what they cost', async () => {
    const service = metrics();
    service.observeRequest(
      { ...record, costNanos: 2_000_000_000, costWithoutCacheNanos: 5_000_000_000 },
      { total: 1 },
    );
    service.observeRequest(
      { ...record, costNanos: 1_000_000_000, costWithoutCacheNanos: 1_000_000_000 },
      { total: 1 },
    );
    // An unknown cost has no baseline either: it is in neither counter.
    service.observeRequest({ ...record, costNanos: null }, { total: 1 });
    const where = { team: 'research', model: 'gpt-4o', backend: 'openai' };
    expect(await values(service, 'switchyard_cost_total')).toEqual([{ labels: where, value: 3 }]);
    expect(await values(service, 'switchyard_cost_without_cache_total')).toEqual([
      { labels: where, value: 6 },
    ]);
  });

  it('counts a request and its tokens by type, from the usage record', async () => {
    const service = metrics();
    service.observeRequest(record, { total: 1.5, upstream: 1.4996, firstToken: 0.2 });
    service.observeRequest(
      { ...record, outcome: 'error', status: 502, promptTokens: 0, completionTokens: 0, reasoningTokens: 0 },
      { total: 0.01, upstream: 0.009 },
    );
    expect(await values(service, 'switchyard_requests_total')).toEqual([
      {
        labels: {
          team: 'research',
          model: 'gpt-4o',
          backend: 'openai',
          endpoint: 'chat.completions',
          status_code: '200',
          stream: 'true',
          outcome: 'ok',
        },
        value: 1,
      },
      {
        labels: {
          team: 'research',
          model: 'gpt-4o',
          backend: 'openai',
          endpoint: 'chat.completions',
          status_code: '502',
          stream: 'true',
          outcome: 'error',
        },
        value: 1,
      },
    ]);
    const tokens = await values(service, 'switchyard_tokens_total');
    expect(tokens.map((t) => [t.labels.type, t.value])).toEqual([
      ['prompt', 12],
      ['completion', 30],
      ['reasoning', 10],
    ]);
    expect(tokens.every((t) => !('token_id' in t.labels))).toBe(true);
  });

  it('labels each endpoint apart (chat completions, messages, embeddings)', async () => {
    const service = metrics();
    service.observeRequest(record, { total: 1 });
    service.observeRequest({ ...record, endpoint: 'messages' }, { total: 1 });
    service.observeRequest({ ...record, endpoint: 'messages' }, { total: 1 });
    const requests = await values(service, 'switchyard_requests_total');
    expect(requests.map((r) => [r.labels.endpoint, r.value])).toEqual([
      ['chat.completions', 1],
      ['messages', 2],
    ]);
    const durations = (await values(service, 'switchyard_request_duration_seconds')).filter((v) =>
      v.metricName?.endsWith('_count'),
    );
    expect(durations.map((d) => [d.labels.endpoint, d.value])).toEqual([
      ['chat.completions', 1],
      ['messages', 2],
    ]);
  });

  it('observes duration, upstream time, overhead = total - upstream, and time to first token', async () => {
    const service = metrics();
    service.observeRequest(record, { total: 1.5, upstream: 1.4996, firstToken: 0.2 });
    const sum = async (name: string) =>
      (await values(service, name)).find((v) => v.metricName === `${name}_sum`)!.value;
    expect(await sum('switchyard_request_duration_seconds')).toBeCloseTo(1.5);
    expect(await sum('switchyard_upstream_duration_seconds')).toBeCloseTo(1.4996);
    expect(await sum('switchyard_gateway_overhead_seconds')).toBeCloseTo(0.0004, 6);
    expect(await sum('switchyard_time_to_first_token_seconds')).toBeCloseTo(0.2);
    // Buckets reach ten minutes, for reasoning models.
    const buckets = (await values(service, 'switchyard_request_duration_seconds'))
      .filter((v) => v.metricName?.endsWith('_bucket'))
      .map((v) => v.labels.le);
    expect(buckets).toContain(600);
  });

  it('a request refused before any backend counts, but stays out of the latency histograms', async () => {
    const service = metrics();
    service.observeRequest(
      {
        ...record,
        backend: '',
        model: '-',
        modelLabel: '-',
        outcome: 'rejected',
        status: 429,
        promptTokens: 0,
        completionTokens: 0,
        reasoningTokens: 0,
      },
      { total: 0.001 },
    );
    expect((await values(service, 'switchyard_requests_total'))[0]).toMatchObject({
      labels: { backend: '-', outcome: 'rejected' },
      value: 1,
    });
    expect(
      (await values(service, 'switchyard_request_duration_seconds')).find((v) =>
        v.metricName?.endsWith('_count'),
      ),
    ).toBeUndefined();
  });

  it('adds token_id labels only when metrics.tokenLabel is on', async () => {
    const service = metrics(true);
    service.observeRequest(record, { total: 1 });
    expect((await values(service, 'switchyard_requests_total'))[0].labels.token_id).toBe(record.tokenId);
    expect((await values(service, 'switchyard_tokens_total'))[0].labels.token_id).toBe(record.tokenId);
  });

  it('reads quota remaining at scrape time and keeps the last values when the source fails', async () => {
    const service = metrics();
    let fail = false;
    service.setQuotaSource(async () => {
      if (fail) throw new Error('redis down');
      return [{ team: 'research', limit: 'tokensPerDay', remaining: 41 }];
    });
    expect(await values(service, 'switchyard_quota_remaining')).toEqual([
      { labels: { team: 'research', limit: 'tokensPerDay' }, value: 41 },
    ]);
    fail = true;
    expect(await values(service, 'switchyard_quota_remaining')).toEqual([
      { labels: { team: 'research', limit: 'tokensPerDay' }, value: 41 },
    ]);
  });

  it('reports in-flight requests from the tracker, and Node process metrics', async () => {
    const tracker = new InFlightTracker();
    const service = new MetricsService(buildConfig({ admin: { apiKey: 'k' } }, {}), tracker);
    const fakeRes = { on: () => undefined } as any;
    tracker.begin(fakeRes);
    tracker.begin(fakeRes);
    expect((await values(service, 'switchyard_in_flight_requests'))[0].value).toBe(2);
    expect(await values(service, 'process_cpu_user_seconds_total')).toHaveLength(1);
  });
});
