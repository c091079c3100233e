import { AppLogger } from '../../src/common/logging/logger';
import { buildConfig } from '../support/config';
import { InFlightTracker } from '../../src/lifecycle/in-flight.tracker';
import { MetricsService } from '../../src/metrics/metrics.service';
import { counterField, type UsageRecord } from '../../src/usage/usage-record';
import { UsageWriter, type PendingUsage, type WriteResult } from '../../src/usage/usage-writer';
import { eventually } from '../support/eventually';
import { InMemoryUsageRecords } from '../support/in-memory-usage-records';
import { usageRecord } from '../support/usage-record-fixture';

/**
 * The usage writer against the in-memory UsageRecords repository (no Redis; the Redis implementation runs the same
 * contract in test/e2e/redis-scripts.e2e.spec.ts): what it hands the store for each record, how it reports each
 * write, its bounded buffer, what it retries and when it waits for replicas.
 */
const NOW = Date.UTC(2026, 10, 21, 10, 0, 0);

function setup(config: Record<string, unknown> = {}) {
  const gatewayConfig = buildConfig({ admin: { apiKey: 'k' }, ...config }, {});
  const store = new InMemoryUsageRecords();
  const metrics = new MetricsService(gatewayConfig, new InFlightTracker());
  const lines: Array<Record<string, unknown>> = [];
  const logger = new AppLogger('info', { write: (line: string) => void lines.push(JSON.parse(line)) });
  const writer = new UsageWriter(store, gatewayConfig, metrics, logger);
  writer.onModuleInit();
  /** Enqueues a record and resolves with the writer's own report of its write. */
  const write = (pending: Omit<PendingUsage, 'onWritten'>) =>
    new Promise<WriteResult>((resolve) => writer.enqueue({ ...pending, onWritten: resolve }));
  return { writer, store, metrics, lines, write, config: gatewayConfig };
}

const record = usageRecord;
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

  it('hands the store each record with the reservation it settles and the leases it releases', async () => {
    const { store, write } = setup();
    const r = record('r1');
    const settle = { keys: ['lim:a', 'lim:b'], deltas: [-5, 7] };
    expect(await write({ record: r, settle, concurrencyKeys: ['conc'] })).toBe('written');
    expect(store.sent).toEqual([
      { record: r, settle, concurrencyKeys: ['conc'], estimate: false, otherDays: [] },
    ]);
  });

  it('a record written again (a retried batch, another writer) is reported as its first write was, and counts once', async () => {
    const { store, write } = setup();
    expect(await write(plain('r1'))).toBe('written');
    expect(await write(plain('r1'))).toBe('written');
    const day = store.counters.get('alpha')?.get('2026-11-21');
    expect(day?.[counterField('requests', '0123456789abcdef', 'm')]).toBe(1);
  });

  it("a request's own record replaces a survivor's estimate of it, and says whether metrics counted the estimate", async () => {
    const { store, write } = setup();
    expect(await write({ ...plain('r1'), estimate: true })).toBe('written');
    expect(await write({ ...plain('r1'), estimate: true })).toBe('duplicate');
    expect(await write(plain('r1'))).toBe('replaced-estimate');
    await write({ ...plain('r2'), estimate: true });
    expect(await store.countEstimate('alpha', 'r2')).toBe('count');
    expect(await write(plain('r2'))).toBe('replaced-counted-estimate');
  });

  it('tells the operator when a request thought lost ended after all (its record replaced the estimate)', async () => {
    const { store, write, lines } = setup();
    store.answer = ({ record: { id } }) =>
      id === 'r1' ? 'replaced-counted-estimate' : id === 'r2' ? 'replaced-estimate' : 'written';
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
    const { store, write } = setup();
    await write({ ...plain('r1'), estimate: true, admittedAt: NOW - 3 * 86_400_000 });
    expect(store.sent[0]).toMatchObject({ estimate: true, otherDays: [] });
  });

  it("a request admitted days before it ended also settles any estimate of it on those days' counters", async () => {
    const { store, write } = setup();
    // Admitted 2026-11-19 23:00, recorded on 2026-11-21: an estimate may be on the 19th or the 20th.
    await write({ ...plain('r1'), admittedAt: Date.UTC(2026, 10, 19, 23) });
    expect(store.sent[0].otherDays).toEqual(['2026-11-19', '2026-11-20']);
  });

  it('looks back at most 8 days, and not at all for a request admitted the same day', async () => {
    const { store, write } = setup();
    await write({ ...plain('r1'), admittedAt: Date.UTC(2026, 10, 1) });
    expect(store.sent[0].otherDays).toEqual(
      ['13', '14', '15', '16', '17', '18', '19', '20'].map((d) => `2026-11-${d}`),
    );
    await write({ ...plain('r2'), admittedAt: Date.UTC(2026, 10, 21, 0, 0, 1) });
    expect(store.sent[1].otherDays).toEqual([]);
  });

  it('a full buffer drops its oldest record, says so, and counts it', async () => {
    const { writer, store, metrics, lines, config } = setup({ usage: { bufferMaxRecords: 100 } });
    store.writable = false; // nothing can be written: the queue is the buffer
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
    const { writer, store, write } = setup();
    store.writable = false;
    const written = [write(plain('r1')), write(plain('r2'))];
    await new Promise((resolve) => setImmediate(resolve));
    expect(store.sent).toHaveLength(0);
    expect(writer.backlog).toBe(2);
    store.becomeWritable();
    expect(await Promise.all(written)).toEqual(['written', 'written']);
    expect(store.sent.map((c) => c.record.id)).toEqual(['r1', 'r2']);
    await writerSettles();
    expect(writer.backlog).toBe(0);
  });

  it('a dropped connection keeps the unwritten records and retries them; each is reported once', async () => {
    const { writer, store, write } = setup();
    let fail = true;
    store.answer = ({ record: { id } }) =>
      fail && id === 'r2' ? new Error('Connection is closed.') : undefined;
    const results = [write(plain('r1')), write(plain('r2')), write(plain('r3'))];
    await results[0];
    await writerSettles();
    expect(writer.backlog).toBe(2); // r2 and r3: r3's answer came after the failure, so it goes again too
    fail = false;
    jest.restoreAllMocks(); // the retry timer runs on real time
    expect(await Promise.all(results)).toEqual(['written', 'written', 'written']);
    expect(store.sent.map((c) => c.record.id)).toEqual(['r1', 'r2', 'r3', 'r2', 'r3']);
  });

  it('a record Redis refuses itself (ERR) is reported refused and not retried; the rest are written', async () => {
    const { writer, store, write, lines } = setup();
    store.answer = ({ record: { id } }) =>
      id === 'r2' ? new Error('ERR wrong number of arguments') : undefined;
    expect(await Promise.all([write(plain('r1')), write(plain('r2')), write(plain('r3'))])).toEqual([
      'written',
      'refused',
      'written',
    ]);
    await writerSettles();
    expect(writer.backlog).toBe(0);
    expect(store.sent).toHaveLength(3);
    expect(lines.find((l) => l.msg === 'usage record rejected by redis')).toMatchObject({ level: 50 });
  });

  it('writes in batches of 200, all of them, in order', async () => {
    const { store, write } = setup();
    const results = await Promise.all(Array.from({ length: 450 }, (_, i) => write(plain(`r${i}`))));
    expect(results.every((r) => r === 'written')).toBe(true);
    expect(store.sent.map((c) => c.record.id)).toEqual(Array.from({ length: 450 }, (_, i) => `r${i}`));
  });

  describe('with replica acknowledgements (usageReplicaAcks)', () => {
    it('waits for the replicas after each batch', async () => {
      const { store, write } = setup({ redis: { usageReplicaAcks: 1, usageReplicaAckTimeoutMs: 300 } });
      await write(plain('r1'));
      await writerSettles();
      expect(store.waits).toEqual([[1, 300]]);
    });

    it('a master with no replica at all is not waited for again for a while; a slow replica is', async () => {
      const { store, write, metrics } = setup({ redis: { usageReplicaAcks: 1 } });
      store.waitAnswer = async () => false; // timed out
      await write(plain('r1'));
      await writerSettles();
      expect(store.roles).toBe(1);
      expect(await metricValue(metrics, 'switchyard_usage_unreplicated_batches_total')).toBe(1);
      store.replicasConnected = 0;
      await write(plain('r2')); // waited, timed out, and ROLE says no replica
      await writerSettles();
      expect(store.waits).toHaveLength(2);
      await write(plain('r3')); // not waited for
      await writerSettles();
      expect(store.waits).toHaveLength(2);
      expect(await metricValue(metrics, 'switchyard_usage_unreplicated_batches_total')).toBe(3);
      (Date.now as jest.Mock).mockReturnValue(NOW + 5_001);
      await write(plain('r4')); // waited for again
      await writerSettles();
      expect(store.waits).toHaveLength(3);
    });

    it('a master that cannot be asked makes the batch go again whole; its records are reported once', async () => {
      const { store, writer } = setup({ redis: { usageReplicaAcks: 1 } });
      let failures = 1;
      const told: WriteResult[] = [];
      store.waitAnswer = async () => {
        if (failures-- > 0) throw new Error('Connection is closed.');
        return true;
      };
      jest.restoreAllMocks(); // the retry timer runs on real time
      writer.enqueue({ ...plain('r1'), onWritten: (result) => told.push(result) });
      await eventually(() => expect(store.waits).toHaveLength(2), 5000);
      expect(store.sent.map((c) => c.record.id)).toEqual(['r1', 'r1']);
      expect(told).toEqual(['written']);
    });
  });

  it('shutdown writes what is buffered', async () => {
    const { writer, store } = setup();
    const results: WriteResult[] = [];
    store.writable = false;
    writer.enqueue({ ...plain('r1'), onWritten: (r) => results.push(r) });
    store.writable = true;
    await writer.beforeApplicationShutdown();
    expect(results).toEqual(['written']);
    expect(writer.backlog).toBe(0);
  });

  it('shutdown gives up on Redis after its deadline: each unwritten record is logged and reported dropped', async () => {
    const { writer, store, lines } = setup();
    store.writable = false;
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
    const { writer, store, write, lines } = setup();
    store.answer = ({ record: { id } }) =>
      id === 'r1'
        ? new Error('WRONGTYPE Operation against a key holding the wrong kind of value')
        : undefined;
    expect(await write(plain('r1'))).toBe('refused');
    store.answer = ({ record: { id } }) =>
      id === 'r2' ? new Error('LOADING Redis is loading the dataset in memory') : undefined;
    writer.enqueue(plain('r2'));
    await writerSettles();
    expect(writer.backlog).toBe(1);
    expect(lines.find((l) => l.msg === 'usage write failed; will retry')).toMatchObject({ level: 40 });
  });
});
