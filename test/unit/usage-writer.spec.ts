import { EventEmitter } from 'node:events';
import type Redis from 'ioredis';
import { AppLogger } from '../../src/common/logging/logger';
import { buildConfig } from '../support/config';
import { InFlightTracker } from '../../src/lifecycle/in-flight.tracker';
import { MetricsService } from '../../src/metrics/metrics.service';
import { RedisKeys } from '../../src/redis/redis-keys';
import { counterIncrements, recordFields, type UsageRecord } from '../../src/usage/usage-record';
import { UsageWriter, type PendingUsage, type WriteResult } from '../../src/usage/usage-writer';
import { eventually } from '../support/eventually';

/**
 * The usage writer against an in-memory connection whose `recordUsage` (the Lua script, tested against a real Redis
 * in test/e2e/redis-scripts.e2e.spec.ts) answers what each test scripts: what it sends for each record, how it
 * reports each write, its bounded buffer, and what it retries.
 */
class FakeUsageRedis extends EventEmitter {
  status = 'ready';
  readonly isCluster = false;
  /** Each recordUsage call's keys and args. */
  readonly calls: Array<{ keys: string[]; args: Array<string | number> }> = [];
  /** What recordUsage answers for a record id (default 1, written); an Error rejects. */
  answer: (recordId: string) => number | Error = () => 1;
  waits: Array<[number, number]> = [];
  waitAnswer: () => Promise<number> = async () => 1;
  roles = 0;
  replicasConnected = 1;

  recordUsage(numberOfKeys: number, ...rest: Array<string | number>): Promise<number> {
    const keys = rest.slice(0, numberOfKeys).map(String);
    const args = rest.slice(numberOfKeys);
    this.calls.push({ keys, args });
    const answer = this.answer(String(args[3]));
    return answer instanceof Error ? Promise.reject(answer) : Promise.resolve(answer);
  }

  wait(replicas: number, timeoutMs: number): Promise<number> {
    this.waits.push([replicas, timeoutMs]);
    return this.waitAnswer();
  }

  async call(command: string): Promise<unknown> {
    if (command !== 'ROLE') throw new Error(`unexpected ${command}`);
    this.roles++;
    return ['master', 0, Array.from({ length: this.replicasConnected }, () => ['127.0.0.1', '6380', '0'])];
  }
}

const NOW = Date.UTC(2026, 10, 21, 10, 0, 0);

function setup(config: Record<string, unknown> = {}) {
  const gatewayConfig = buildConfig({ admin: { apiKey: 'k' }, ...config }, {});
  const redis = new FakeUsageRedis();
  const keys = new RedisKeys('p:');
  const metrics = new MetricsService(gatewayConfig, new InFlightTracker());
  const lines: Array<Record<string, unknown>> = [];
  const logger = new AppLogger('info', { write: (line: string) => void lines.push(JSON.parse(line)) });
  const writer = new UsageWriter(redis as unknown as Redis, keys, gatewayConfig, metrics, logger);
  writer.onModuleInit();
  /** Enqueues a record and resolves with the writer's own report of its write. */
  const write = (pending: Omit<PendingUsage, 'onWritten'>) =>
    new Promise<WriteResult>((resolve) => writer.enqueue({ ...pending, onWritten: resolve }));
  return { writer, redis, metrics, lines, write, config: gatewayConfig };
}

const record = (id: string, over: Partial<UsageRecord> = {}): UsageRecord => ({
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
  costNanos: 0,
  costEstimated: false,
  ...over,
});
const plain = (id: string, over: Partial<UsageRecord> = {}) => ({
  record: record(id, over),
  settle: { keys: [], deltas: [] },
  concurrencyKeys: [],
});
/**
 * A write is reported (onWritten) before the writer takes it off its queue and waits for replicas: the fake answers
 * at once, so one turn of the event loop lets the writer finish what it does after that.
 */
const writerSettles = () => new Promise((resolve) => setImmediate(resolve));
const metricValue = async (metrics: MetricsService, name: string) =>
  (await metrics.registry.getSingleMetric(name)!.get()).values.reduce((sum, v) => sum + v.value, 0);

describe('UsageWriter', () => {
  beforeEach(() => jest.spyOn(Date, 'now').mockReturnValue(NOW));
  afterEach(() => jest.restoreAllMocks());

  it('sends one script call per record: its marker, stream, day counters, lease, settlement and fields', async () => {
    const { redis, write } = setup();
    const r = record('r1');
    const result = await write({
      record: r,
      settle: { keys: ['p:lim:a', 'p:lim:b'], deltas: [-5, 7] },
      concurrencyKeys: ['p:conc'],
    });
    expect(result).toBe('written');
    expect(redis.calls).toHaveLength(1);
    const { keys, args } = redis.calls[0];
    expect(keys).toEqual([
      'p:usage:{alpha}:seen:r1',
      'p:usage:{alpha}:records',
      'p:usage:{alpha}:d:2026-11-21',
      'p:inflight:{alpha}',
      'p:lim:a',
      'p:lim:b',
      'p:conc',
    ]);
    const increments = counterIncrements(r);
    expect(args).toEqual([
      7 * 86_400, // the marker outlives any retry by days
      `${NOW - 90 * 86_400_000}-0`, // stream trimmed to recordRetentionDays (90)
      400 * 86_400, // counters kept counterRetentionDays (400)
      'r1',
      2, // limit keys
      increments.length,
      'real',
      0, // no other days
      '2026-11-21',
      ...increments.flat(),
      -5,
      7,
      ...recordFields(r),
    ]);
  });

  it.each([
    [0, 'duplicate'],
    [1, 'written'],
    [2, 'replaced-estimate'],
    [3, 'replaced-counted-estimate'],
  ] as const)("reports the script's answer %i as %s", async (answer, result) => {
    const { redis, write } = setup();
    redis.answer = () => answer;
    expect(await write(plain('r1'))).toBe(result);
  });

  it('tells the operator when a request thought lost ended after all (its record replaced the estimate)', async () => {
    const { redis, write, lines } = setup();
    redis.answer = (id) => (id === 'r1' ? 3 : id === 'r2' ? 2 : 1);
    await write(plain('r1'));
    await write(plain('r2'));
    await write(plain('r3'));
    const warnings = lines.filter((l) => String(l.msg).includes('replaced the estimate'));
    expect(warnings.map((l) => [l.recordId, l.metricsKeepEstimate, l.level])).toEqual([
      ['r1', true, 40],
      ['r2', false, 40],
    ]);
  });

  it("a survivor's estimate is written as such, and looks for no other day", async () => {
    const { redis, write } = setup();
    await write({ ...plain('r1'), estimate: true, admittedAt: NOW - 3 * 86_400_000 });
    const { keys, args } = redis.calls[0];
    expect(args[6]).toBe('estimate');
    expect(args[7]).toBe(0);
    expect(keys).toHaveLength(4);
  });

  it("a request admitted days before it ended also settles any estimate of it on those days' counters", async () => {
    const { redis, write } = setup();
    // Admitted 2026-11-19 23:00, recorded on 2026-11-21: an estimate may be on the 19th or the 20th.
    await write({ ...plain('r1'), admittedAt: Date.UTC(2026, 10, 19, 23) });
    const { keys, args } = redis.calls[0];
    expect(keys.slice(4)).toEqual(['p:usage:{alpha}:d:2026-11-19', 'p:usage:{alpha}:d:2026-11-20']);
    expect(args.slice(7, 11)).toEqual([2, '2026-11-21', '2026-11-19', '2026-11-20']);
  });

  it('looks back at most 8 days, and not at all for a request admitted the same day', async () => {
    const { redis, write } = setup();
    await write({ ...plain('r1'), admittedAt: Date.UTC(2026, 10, 1) });
    expect(redis.calls[0].keys.slice(4)).toEqual(
      ['13', '14', '15', '16', '17', '18', '19', '20'].map((d) => `p:usage:{alpha}:d:2026-11-${d}`),
    );
    await write({ ...plain('r2'), admittedAt: Date.UTC(2026, 10, 21, 0, 0, 1) });
    expect(redis.calls[1].keys).toHaveLength(4);
  });

  it('a full buffer drops its oldest record, says so, and counts it', async () => {
    const { writer, redis, metrics, lines, config } = setup({ usage: { bufferMaxRecords: 100 } });
    redis.status = 'reconnecting'; // nothing can be written: the queue is the buffer
    const max = config.usage.bufferMaxRecords;
    expect(max).toBe(100);
    const results: WriteResult[] = [];
    for (let i = 0; i < max + 2; i++)
      writer.enqueue({ ...plain(`r${i}`), onWritten: (result) => results.push(result) });
    expect(writer.backlog).toBe(max);
    expect(results).toEqual(['dropped', 'dropped']);
    expect(await metricValue(metrics, 'switchyard_usage_dropped_records_total')).toBe(2);
    expect(await metricValue(metrics, 'switchyard_usage_buffered_records')).toBe(max);
    expect(lines.filter((l) => l.msg === 'usage buffer full: oldest record dropped')).toHaveLength(2);
    expect(lines.find((l) => l.msg === 'usage buffer full: oldest record dropped')).toMatchObject({
      record: { id: 'r0' },
    });
  });

  it('while Redis is not ready nothing is sent; once it is, the buffer is written in order', async () => {
    const { writer, redis, write } = setup();
    redis.status = 'reconnecting';
    const written = [write(plain('r1')), write(plain('r2'))];
    await new Promise((resolve) => setImmediate(resolve));
    expect(redis.calls).toHaveLength(0);
    expect(writer.backlog).toBe(2);
    redis.status = 'ready';
    redis.emit('ready');
    expect(await Promise.all(written)).toEqual(['written', 'written']);
    expect(redis.calls.map((c) => c.args[3])).toEqual(['r1', 'r2']);
    await writerSettles();
    expect(writer.backlog).toBe(0);
  });

  it('a dropped connection keeps the unwritten records and retries them; each is reported once', async () => {
    const { writer, redis, write } = setup();
    let fail = true;
    redis.answer = (id) => (fail && id === 'r2' ? new Error('Connection is closed.') : 1);
    const results = [write(plain('r1')), write(plain('r2')), write(plain('r3'))];
    await results[0];
    await writerSettles();
    expect(writer.backlog).toBe(2); // r2 and r3: r3's answer came after the failure, so it goes again too
    fail = false;
    jest.restoreAllMocks(); // the retry timer runs on real time
    expect(await Promise.all(results)).toEqual(['written', 'written', 'written']);
    expect(redis.calls.map((c) => c.args[3])).toEqual(['r1', 'r2', 'r3', 'r2', 'r3']);
  });

  it('a record Redis refuses itself (ERR) is reported refused and not retried; the rest are written', async () => {
    const { writer, redis, write, lines } = setup();
    redis.answer = (id) => (id === 'r2' ? new Error('ERR wrong number of arguments') : 1);
    expect(await Promise.all([write(plain('r1')), write(plain('r2')), write(plain('r3'))])).toEqual([
      'written',
      'refused',
      'written',
    ]);
    await writerSettles();
    expect(writer.backlog).toBe(0);
    expect(redis.calls).toHaveLength(3);
    expect(lines.find((l) => l.msg === 'usage record rejected by redis')).toMatchObject({ level: 50 });
  });

  it('writes in batches of 200, all of them, in order', async () => {
    const { redis, write } = setup();
    const results = await Promise.all(Array.from({ length: 450 }, (_, i) => write(plain(`r${i}`))));
    expect(results.every((r) => r === 'written')).toBe(true);
    expect(redis.calls.map((c) => c.args[3])).toEqual(Array.from({ length: 450 }, (_, i) => `r${i}`));
  });

  describe('with replica acknowledgements (usageReplicaAcks)', () => {
    it('waits for the replicas after each batch', async () => {
      const { redis, write } = setup({ redis: { usageReplicaAcks: 1, usageReplicaAckTimeoutMs: 300 } });
      await write(plain('r1'));
      await writerSettles();
      expect(redis.waits).toEqual([[1, 300]]);
    });

    it('a master with no replica at all is not waited for again for a while; a slow replica is', async () => {
      const { redis, write, metrics } = setup({ redis: { usageReplicaAcks: 1 } });
      redis.waitAnswer = async () => 0; // timed out
      await write(plain('r1'));
      await writerSettles();
      expect(redis.roles).toBe(1);
      expect(await metricValue(metrics, 'switchyard_usage_unreplicated_batches_total')).toBe(1);
      redis.replicasConnected = 0;
      await write(plain('r2')); // waited, timed out, and ROLE says no replica
      await writerSettles();
      expect(redis.waits).toHaveLength(2);
      await write(plain('r3')); // not waited for
      await writerSettles();
      expect(redis.waits).toHaveLength(2);
      expect(await metricValue(metrics, 'switchyard_usage_unreplicated_batches_total')).toBe(3);
      (Date.now as jest.Mock).mockReturnValue(NOW + 5_001);
      await write(plain('r4')); // waited for again
      await writerSettles();
      expect(redis.waits).toHaveLength(3);
    });

    it('a master that cannot be asked makes the batch go again whole; its records are reported once', async () => {
      const { redis, writer } = setup({ redis: { usageReplicaAcks: 1 } });
      let failures = 1;
      const told: WriteResult[] = [];
      redis.waitAnswer = async () => {
        if (failures-- > 0) throw new Error('Connection is closed.');
        return 1;
      };
      jest.restoreAllMocks(); // the retry timer runs on real time
      writer.enqueue({ ...plain('r1'), onWritten: (result) => told.push(result) });
      await eventually(() => expect(redis.waits).toHaveLength(2), 5000);
      expect(redis.calls.map((c) => c.args[3])).toEqual(['r1', 'r1']);
      expect(told).toEqual(['written']);
    });
  });

  it('shutdown writes what is buffered', async () => {
    const { writer, redis } = setup();
    const results: WriteResult[] = [];
    redis.status = 'reconnecting';
    writer.enqueue({ ...plain('r1'), onWritten: (r) => results.push(r) });
    redis.status = 'ready';
    await writer.beforeApplicationShutdown();
    expect(results).toEqual(['written']);
    expect(writer.backlog).toBe(0);
  });

  it('shutdown gives up on Redis after its deadline: each unwritten record is logged and reported dropped', async () => {
    const { writer, redis, lines } = setup();
    redis.status = 'reconnecting';
    const results: WriteResult[] = [];
    writer.enqueue({ ...plain('r1'), onWritten: (r) => results.push(r) });
    writer.enqueue({ ...plain('r2'), onWritten: (r) => results.push(r) });
    // The deadline is taken first; every later clock read is past it.
    (Date.now as jest.Mock).mockReturnValueOnce(NOW).mockReturnValue(NOW + 5_001);
    await writer.beforeApplicationShutdown();
    expect(results).toEqual(['dropped', 'dropped']);
    expect(
      lines
        .filter((l) => l.msg === 'usage record not written before shutdown')
        .map((l) => (l.record as UsageRecord).id),
    ).toEqual(['r1', 'r2']);
  });

  it('a WRONGTYPE answer is a refusal too (not retried); anything else is taken for the connection', async () => {
    const { writer, redis, write, lines } = setup();
    redis.answer = (id) =>
      id === 'r1' ? new Error('WRONGTYPE Operation against a key holding the wrong kind of value') : 1;
    expect(await write(plain('r1'))).toBe('refused');
    redis.answer = (id) => (id === 'r2' ? new Error('LOADING Redis is loading the dataset in memory') : 1);
    writer.enqueue(plain('r2'));
    await writerSettles();
    expect(writer.backlog).toBe(1);
    expect(lines.find((l) => l.msg === 'usage write failed; will retry')).toMatchObject({ level: 40 });
  });
});
