import { randomBytes, randomUUID } from 'node:crypto';
import Redis from 'ioredis';
import { AppLogger } from '../../src/common/logging/logger';
import { buildConfig } from '../support/config';
import { InFlightTracker } from '../../src/lifecycle/in-flight.tracker';
import { MetricsService } from '../../src/metrics/metrics.service';
import { RedisKeys } from '../../src/redis/redis-keys';
import { counterIncrements, recordFields, type UsageRecord } from '../../src/usage/usage-record';
import { RedisUsageRecords } from '../../src/usage/redis-usage-records.repository';
import { UsageWriter, type PendingUsage, type WriteResult } from '../../src/usage/usage-writer';
import { deletePrefix, REDIS_URL } from '../support/test-gateway';

/**
 * The usage script against a real Redis: a survivor's estimate of a lost request (replica_lost, what it reserved)
 * and the request's own record arriving after it. One record per request, counted once, with the true counts.
 */
describe("the usage script: a late real record replaces a survivor's estimate", () => {
  const prefix = `sy-test:${randomBytes(6).toString('hex')}:`;
  const keys = new RedisKeys(prefix);
  const redis = new Redis(REDIS_URL);
  const config = buildConfig({ admin: { apiKey: 'k' }, redis: { url: REDIS_URL, keyPrefix: prefix } }, {});
  const store = new RedisUsageRecords(redis, redis, keys, config);
  const writer = new UsageWriter(
    store,
    config,
    new MetricsService(config, new InFlightTracker()),
    new AppLogger('silent'),
  );
  const today = new Date().toISOString().slice(0, 10);
  const yesterday = new Date(Date.now() - 86_400_000).toISOString();

  afterAll(async () => {
    await deletePrefix(redis, prefix);
    await redis.quit();
  });

  /** Writes one record and resolves with how the write went. */
  const write = (pending: PendingUsage) =>
    new Promise<WriteResult>((resolve) => {
      writer.enqueue({ ...pending, onWritten: resolve });
    });
  /** A survivor's estimate of a lost replica's request: nothing to settle, no lease to release. */
  const writeEstimate = (record: UsageRecord) =>
    write({ record, settle: { keys: [], deltas: [] }, concurrencyKeys: [], estimate: true });

  function records(team: string, recordId: string, admittedAt = Date.now() - 5000) {
    const common = {
      id: recordId,
      requestId: 'req-1',
      team,
      tokenId: '0123456789abcdef',
      model: 'priced',
      modelLabel: 'priced',
      backend: 'standin',
      upstreamModel: 'echo',
      servedModel: 'priced',
      endpoint: 'chat.completions',
      stream: true,
      reasoningTokens: 0,
      cachedTokens: 0,
      cacheWriteTokens: 0,
      cacheWrite1hTokens: 0,
      cacheHit: false,
    };
    // What the survivor bills: the reservation (prompt estimate + max_tokens), estimated, as an error.
    const estimate: UsageRecord = {
      ...common,
      at: new Date().toISOString(),
      attempts: 1,
      promptTokens: 75,
      completionTokens: 1024, // the max_tokens it reserved
      status: 502,
      outcome: 'error',
      errorCode: 'replica_lost',
      latencyMs: 3000,
      estimated: true,
      costNanos: 67_500_000,
      costEstimated: true,
    };
    // What the request really used.
    const real: UsageRecord = {
      ...common,
      at: new Date().toISOString(),
      promptTokens: 59,
      completionTokens: 60,
      reasoningTokens: 12,
      cachedTokens: 8,
      cacheWriteTokens: 0,
      cacheWrite1hTokens: 0,
      backend: 'standin-b', // a retry on another deployment
      attempts: 2,
      status: 200,
      outcome: 'ok',
      errorCode: '',
      latencyMs: 7000,
      estimated: false,
      costNanos: 65_900_000,
      costEstimated: false,
    };
    return { estimate, real, admittedAt };
  }

  /** The team's budget counter holding what the request reserved (as the admission script left it). */
  async function budgetReserving(team: string, nanos: number): Promise<string> {
    const key = keys.limitCounter(team, 'team', 'budgetPerDay', today);
    await redis.set(key, nanos, 'EX', 3600);
    return key;
  }

  const counters = async (team: string, day = today) =>
    Object.fromEntries(
      Object.entries(await redis.hgetall(keys.usageDay(team, day))).map(([field, value]) => [
        field,
        Number(value),
      ]),
    );
  const expectedCounters = (record: UsageRecord) => Object.fromEntries(counterIncrements(record));
  const stream = (team: string) => redis.xrange(keys.usageRecords(team), '-', '+');
  const field = (entry: [string, string[]], name: string) => entry[1][entry[1].indexOf(name) + 1];

  it('replaces the estimate (counters, stream entry, budget) and a second write of the same record changes nothing', async () => {
    const team = 'replaced';
    const { estimate, real, admittedAt } = records(team, randomUUID());
    const budget = await budgetReserving(team, 67_500_000);
    expect(await writeEstimate(estimate)).toBe('written');
    expect(await counters(team)).toEqual(expectedCounters(estimate));
    expect((await stream(team)).map((entry) => field(entry, 'error_code'))).toEqual(['replica_lost']);

    const settle = { keys: [budget], deltas: [real.costNanos! - 67_500_000] };
    expect(await write({ record: real, settle, concurrencyKeys: [], admittedAt })).toBe('replaced-estimate');
    expect(await counters(team)).toEqual(expectedCounters(real));
    const entries = await stream(team);
    expect(entries).toHaveLength(1);
    // Every field is the real record's, none the estimate's (its reserved completion, status, cost, ...).
    expect(entries[0][1]).toEqual(recordFields(real));
    expect(Number(await redis.get(budget))).toBe(65_900_000);

    // The same write again (a batch retried after its reply was lost): the same answer, nothing counted twice.
    expect(await write({ record: real, settle, concurrencyKeys: [], admittedAt })).toBe('replaced-estimate');
    expect(await counters(team)).toEqual(expectedCounters(real));
    expect(await stream(team)).toHaveLength(1);
    expect(Number(await redis.get(budget))).toBe(65_900_000);
    // A second survivor's estimate of it, late: nothing.
    expect(await writeEstimate(estimate)).toBe('duplicate');
    expect(await counters(team)).toEqual(expectedCounters(real));
    // The survivor's metrics never count it: the real record came first.
    expect(await store.countEstimate(team, real.id)).toBe('skip');
  });

  it('an estimate is counted in metrics once, by one replica; a real record after that still replaces it in Redis and says so', async () => {
    const team = 'counted-first';
    const { estimate, real, admittedAt } = records(team, randomUUID());
    expect(await writeEstimate(estimate)).toBe('written');
    const marker = keys.usageSeen(team, estimate.id);
    const ttl = await redis.ttl(marker);
    expect(await store.countEstimate(team, estimate.id)).toBe('count');
    expect(await store.countEstimate(team, estimate.id)).toBe('skip'); // another survivor that settled it too
    expect(await redis.ttl(marker)).toBeGreaterThan(ttl - 5); // the marker keeps its lifetime
    expect(
      await write({ record: real, settle: { keys: [], deltas: [] }, concurrencyKeys: [], admittedAt }),
    ).toBe('replaced-counted-estimate');
    expect(await counters(team)).toEqual(expectedCounters(real));
    expect(await stream(team)).toHaveLength(1);
    expect(await store.countEstimate(team, 'never-written')).toBe('missing');
  });

  it('a real record first makes a later estimate a no-op', async () => {
    const team = 'real-first';
    const { estimate, real, admittedAt } = records(team, randomUUID());
    expect(
      await write({ record: real, settle: { keys: [], deltas: [] }, concurrencyKeys: [], admittedAt }),
    ).toBe('written');
    expect(await writeEstimate(estimate)).toBe('duplicate');
    expect(await counters(team)).toEqual(expectedCounters(real));
    expect(await stream(team)).toHaveLength(1);
    expect(await store.countEstimate(team, real.id)).toBe('skip');
  });

  it('a record accounted before midnight and written after a survivor estimated it after midnight replaces that estimate', async () => {
    const team = 'written-after-midnight';
    const { estimate, real } = records(team, randomUUID());
    // The request ended yesterday, but its record waited in this replica's buffer (Redis out of reach) while a
    // survivor, today, recorded it as lost.
    const lateReal = { ...real, at: yesterday };
    expect(
      await write({
        record: estimate,
        settle: { keys: [], deltas: [] },
        concurrencyKeys: [],
        estimate: true,
      }),
    ).toBe('written');
    expect(
      await write({
        record: lateReal,
        settle: { keys: [], deltas: [] },
        concurrencyKeys: [],
        admittedAt: Date.parse(yesterday) - 1000,
      }),
    ).toBe('replaced-estimate');
    expect(await counters(team)).toEqual({});
    expect(await counters(team, yesterday.slice(0, 10))).toEqual(expectedCounters(lateReal));
    const entries = await stream(team);
    expect(entries).toHaveLength(1);
    expect(entries[0][1]).toEqual(recordFields(lateReal));
  });

  it('an estimate counted on the day before (a request across midnight) is taken off that day', async () => {
    const team = 'midnight';
    const { estimate, real } = records(team, randomUUID());
    const lateEstimate = { ...estimate, at: yesterday };
    expect(await writeEstimate(lateEstimate)).toBe('written');
    expect(await counters(team, yesterday.slice(0, 10))).toEqual(expectedCounters(lateEstimate));
    expect(
      await write({
        record: real,
        settle: { keys: [], deltas: [] },
        concurrencyKeys: [],
        admittedAt: Date.parse(yesterday) - 1000,
      }),
    ).toBe('replaced-estimate');
    expect(await counters(team, yesterday.slice(0, 10))).toEqual({});
    expect(await counters(team)).toEqual(expectedCounters(real));
    expect(await stream(team)).toHaveLength(1);
  });
});
