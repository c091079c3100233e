import { randomBytes } from 'node:crypto';
import { Pool } from 'pg';
import { migrateDatabase } from '../../src/cli/db-migrate';
import type { GatewayConfig, RequestLogRetentionConfig } from '../../src/config/config.schema';
import { MIGRATIONS, migrate } from '../../src/request-log/postgres/postgres-migrations';
import { ensurePartitions, partitionsOf } from '../../src/request-log/postgres/postgres-partitions';
import { PostgresRequestLogStore } from '../../src/request-log/postgres/postgres-request-log.repository';
import type { RequestLogEntry, RequestLogRecord } from '../../src/request-log/request-log-entry';
import { InvalidCursorError } from '../../src/request-log/request-log-query';
import { eventually } from '../support/eventually';
import { freePort } from '../support/free-port';
import { startTestDatabase, type TestDatabase } from '../support/postgres';

const DAY = 86_400_000;

let serial = 0;
/** An entry with every field set (a person with an email, a content-kept call that failed over once). */
function entry(overrides: Partial<RequestLogEntry> = {}): RequestLogEntry {
  serial += 1;
  return {
    id: `r${String(serial).padStart(4, '0')}`,
    requestId: `req-${serial}`,
    at: '2026-11-27T10:42:00.123Z',
    team: 'alpha',
    token: { id: 'tok_1', name: 'ci' },
    person: { subject: 'u-7', email: 'ana@example.com' },
    endpoint: 'chat.completions',
    stream: false,
    model: 'gpt-6-luna',
    servedModel: 'gpt-6-luna',
    deployment: 'openai/gpt-6-luna-2026',
    attempts: [
      {
        kind: 'call',
        model: 'gpt-6-luna',
        deployment: 'azure/luna',
        outcome: 'upstream_unavailable',
        status: 503,
        durationMs: 12.5,
        error: 'busy',
      },
      { kind: 'skipped', model: 'gpt-6-luna', deployment: 'vertex/luna', reason: 'circuit_open' },
      {
        kind: 'call',
        model: 'gpt-6-luna',
        deployment: 'openai/gpt-6-luna-2026',
        outcome: 'ok',
        status: 200,
        durationMs: 80.25,
        error: null,
      },
    ],
    status: 200,
    outcome: 'ok',
    errorCode: null,
    latencyMs: 95.5,
    ttfbMs: 40.125,
    usage: {
      prompt: 120,
      completion: 30,
      reasoning: 4,
      cached: 64,
      cacheWrite: 12,
      cacheWrite1h: 2,
      estimated: false,
    },
    costNanos: 9_007_199_254,
    traceId: '4bf92f3577b34da6a3ce929d0e0e4736',
    clientAddress: '10.0.0.7',
    contentKept: false,
    cacheHit: false,
    ...overrides,
  };
}

const records = (entries: RequestLogEntry[]): RequestLogRecord[] => entries.map((e) => ({ entry: e }));

/**
 * The PostgreSQL store of the request log against a real server: the machine's PostgreSQL 15, a database of the
 * run's own (test/support/postgres.ts starts a private server when none answers). Each test has its own schema,
 * so the partitions one test drops are no other test's.
 */
describe('request log: the PostgreSQL store', () => {
  let database: TestDatabase;
  let pool: Pool;
  const stores: PostgresRequestLogStore[] = [];

  function storeFor(
    schema = `t_${randomBytes(4).toString('hex')}`,
    retention: Partial<RequestLogRetentionConfig> = {},
    url = database.url,
    now?: () => Date,
  ): PostgresRequestLogStore {
    const store = new PostgresRequestLogStore({
      postgres: { url, schema, poolSize: 2 },
      retentionDays: { metadata: 30, content: 7, ...retention },
      now,
    });
    stores.push(store);
    return store;
  }

  async function partitionNames(
    schema: string,
    table: 'request_log' | 'request_log_content',
  ): Promise<string[]> {
    return (await partitionsOf(pool, schema, table)).map((p) => p.name).sort();
  }

  beforeAll(async () => {
    database = await startTestDatabase();
    pool = new Pool({ connectionString: database.url, max: 2 });
    // pool.end() resolves before its connections have closed: the drop's FORCE may still terminate one.
    pool.on('error', () => {});
  });
  afterAll(async () => {
    await Promise.all(stores.map((store) => store.close()));
    await pool?.end();
    await database?.drop();
  });

  it('migrates a schema once: two replicas starting together apply it once, a later run applies nothing', async () => {
    const schema = 'migrated';
    const replicas = [
      new Pool({ connectionString: database.url }),
      new Pool({ connectionString: database.url }),
    ];
    const together = await Promise.all(replicas.map((replica) => migrate(replica, schema)));
    await Promise.all(replicas.map((replica) => replica.end()));
    expect([...together].sort((a, b) => b.length - a.length)).toEqual([MIGRATIONS.map((m) => m.version), []]);
    expect(await migrate(pool, schema)).toEqual([]);
    const { rows } = await pool.query(`SELECT version FROM migrated.schema_migrations ORDER BY version`);
    expect(rows).toEqual(MIGRATIONS.map((m) => ({ version: m.version })));
    const tables = await pool.query(
      `SELECT relname FROM pg_class JOIN pg_namespace n ON n.oid = relnamespace
        WHERE nspname = 'migrated' AND relkind = 'p' ORDER BY relname`,
    );
    expect(tables.rows.map((r: { relname: string }) => r.relname)).toEqual([
      'request_log',
      'request_log_content',
    ]);
  });

  it('brings a schema made by the first step up to date: partitions made before step 2 gain cache_hit, false', async () => {
    const schema = 'upgraded';
    expect(await migrate(pool, schema, MIGRATIONS.slice(0, 1))).toEqual([1]);
    await ensurePartitions(pool, schema, ['20261127']);
    expect(await migrate(pool, schema)).toEqual([2]);
    const { rows } = await pool.query(
      `SELECT table_name, column_default, is_nullable FROM information_schema.columns
        WHERE table_schema = 'upgraded' AND column_name = 'cache_hit' ORDER BY table_name`,
    );
    expect(rows).toEqual([
      { table_name: 'request_log', column_default: 'false', is_nullable: 'NO' },
      { table_name: 'request_log_p20261127', column_default: 'false', is_nullable: 'NO' },
    ]);
  });

  it('`switchyard db migrate` migrates the configured schema and says what it applied', async () => {
    const config = (schema: string, url = database.url) =>
      ({ logging: { requests: { postgres: { url, schema, poolSize: 4 } } } }) as unknown as GatewayConfig;
    const written: string[] = [];
    const write = jest.spyOn(process.stdout, 'write').mockImplementation((chunk) => {
      written.push(String(chunk));
      return true;
    });
    try {
      await migrateDatabase(config('by_cli'));
      await migrateDatabase(config('by_cli'));
    } finally {
      write.mockRestore();
    }
    expect(written.map((text) => JSON.parse(text) as unknown)).toEqual([
      { schema: 'by_cli', applied: [1, 2], version: 2 },
      { schema: 'by_cli', applied: [], version: 2 },
    ]);
    await expect(migrateDatabase(config('by_cli', ''))).rejects.toThrow(/postgres.url is not set/);
  });

  it('keeps every field of an entry exactly, and answers newest first', async () => {
    const store = storeFor();
    const older = entry({ at: '2026-11-27T10:00:00.001Z', person: { subject: 'u-8' }, costNanos: null });
    const newer = entry({
      at: '2026-11-27T11:00:00.999Z',
      person: null,
      token: { id: 'tok_2', name: null },
      deployment: null,
      ttfbMs: null,
      traceId: null,
      clientAddress: null,
      errorCode: 'rate_limited',
      status: 429,
      outcome: 'rejected',
      stream: true,
    });
    expect(await store.append(records([older, newer]))).toEqual({ evicted: 0 });
    const page = await store.query({ limit: 10 });
    expect(page.next).toBeNull();
    expect(page.entries).toStrictEqual([newer, older]);
    expect(typeof page.entries[0].latencyMs).toBe('number');
  });

  it('narrows by every filter', async () => {
    const store = storeFor();
    const a = entry({ team: 'alpha', model: 'luna', servedModel: 'luna', at: '2026-11-27T08:00:00.000Z' });
    const b = entry({
      team: 'beta',
      model: 'fast',
      servedModel: 'luna-mini',
      at: '2026-11-27T09:00:00.000Z',
    });
    const c = entry({
      team: 'beta',
      model: 'luna-mini',
      servedModel: '',
      status: 503,
      outcome: 'error',
      endpoint: 'messages',
      traceId: 'ffffffffffffffffffffffffffffffff',
      at: '2026-11-27T10:00:00.000Z',
    });
    await store.append(records([a, b, c]));
    const ids = async (filter: Parameters<PostgresRequestLogStore['query']>[0]) =>
      (await store.query(filter)).entries.map((e) => e.id);
    expect(await ids({ limit: 10 })).toEqual([c.id, b.id, a.id]);
    expect(await ids({ limit: 10, team: 'beta' })).toEqual([c.id, b.id]);
    expect(await ids({ limit: 10, model: 'luna-mini' })).toEqual([c.id, b.id]); // asked for (c) or served (b)
    expect(await ids({ limit: 10, model: 'fast' })).toEqual([b.id]);
    expect(await ids({ limit: 10, status: 503 })).toEqual([c.id]);
    expect(await ids({ limit: 10, status: 200 })).toEqual([b.id, a.id]);
    expect(await ids({ limit: 10, endpoint: 'messages' })).toEqual([c.id]);
    expect(await ids({ limit: 10, outcome: 'error' })).toEqual([c.id]);
    expect(await ids({ limit: 10, outcome: 'ok' })).toEqual([b.id, a.id]);
    expect(await ids({ limit: 10, from: '2026-11-27T09:00:00.000Z' })).toEqual([c.id, b.id]); // inclusive
    expect(await ids({ limit: 10, to: '2026-11-27T09:00:00.000Z' })).toEqual([a.id]); // exclusive
    expect(await ids({ limit: 10, traceId: c.traceId! })).toEqual([c.id]);
    expect(await ids({ limit: 10, team: 'beta', model: 'luna-mini', status: 200 })).toEqual([b.id]);
    expect(await ids({ limit: 10, team: 'gamma' })).toEqual([]);
    expect(await ids({ limit: 10, teams: ['alpha', 'gamma'] })).toEqual([a.id]);
    expect(await ids({ limit: 10, teams: ['beta', 'alpha'], status: 200 })).toEqual([b.id, a.id]);
    expect(await ids({ limit: 10, teams: [] })).toEqual([]);
  });

  it('pages with `after` across pages, without duplicates or gaps, same-millisecond entries ordered by id', async () => {
    const store = storeFor();
    const start = Date.parse('2026-11-27T12:00:00.000Z');
    // 25 entries: 15 a millisecond apart, then 10 in one millisecond (ids out of insertion order).
    const entries = [
      ...Array.from({ length: 15 }, (_, i) => entry({ at: new Date(start + i).toISOString() })),
      ...Array.from({ length: 10 }, (_, i) =>
        entry({ id: `same-${(i * 7) % 10}`, at: new Date(start + 20).toISOString() }),
      ),
    ];
    await store.append(records(entries));
    const seen: string[] = [];
    const sizes: number[] = [];
    let after: string | undefined;
    for (let page = 0; page < 5; page++) {
      const result = await store.query({ limit: 10, after });
      seen.push(...result.entries.map((e) => e.id));
      sizes.push(result.entries.length);
      if (!result.next) break;
      after = result.next;
    }
    const expected = [...entries]
      .sort((x, y) => (x.at === y.at ? (x.id < y.id ? -1 : 1) : x.at < y.at ? -1 : 1))
      .reverse()
      .map((e) => e.id);
    expect(sizes).toEqual([10, 10, 5]);
    expect(seen).toEqual(expected);
    expect(seen.slice(0, 10)).toEqual(Array.from({ length: 10 }, (_, i) => `same-${9 - i}`));
    // A page boundary inside one millisecond: strictly older than (at, id), nothing repeated.
    const first = await store.query({ limit: 3 });
    const second = await store.query({ limit: 3, after: first.next! });
    expect([...first.entries, ...second.entries].map((e) => e.id)).toEqual(expected.slice(0, 6));
    // Filters and the cursor together.
    const filtered = await store.query({
      limit: 5,
      after: first.next!,
      from: new Date(start + 20).toISOString(),
    });
    expect(filtered.entries.map((e) => e.id)).toEqual(expected.slice(3, 8));
    await expect(store.query({ limit: 10, after: 'bm90LWEtY3Vyc29y' })).rejects.toThrow(InvalidCursorError);
    const farOff = Buffer.from(`${Number.MAX_SAFE_INTEGER}|x`).toString('base64url');
    await expect(store.query({ limit: 10, after: farOff })).rejects.toThrow(InvalidCursorError);
  });

  it('is idempotent: the same batch twice keeps one row of each entry and content', async () => {
    const store = storeFor('idem');
    const batch: RequestLogRecord[] = [
      { entry: entry({ contentKept: true }), content: { request: { messages: [] }, response: 'hi' } },
      { entry: entry() },
    ];
    await store.append(batch);
    await store.append(batch);
    const counts = await pool.query(
      `SELECT (SELECT count(*) FROM idem.request_log)::int AS entries,
              (SELECT count(*) FROM idem.request_log_content)::int AS contents`,
    );
    expect(counts.rows[0]).toEqual({ entries: 2, contents: 1 });
  });

  it('keeps content apart and returns it with the entry; null content when none was kept; null when unknown', async () => {
    const store = storeFor('apart');
    const request = {
      model: 'luna',
      z: 1,
      a: [{ role: 'user', content: 'hé [email] \u0000 "quoted" \\ back' }],
    };
    const kept = entry({ contentKept: true });
    const bare = entry();
    await store.append([{ entry: kept, content: { request, response: null } }, { entry: bare }]);
    const got = await store.get(kept.id);
    expect(got).toStrictEqual({ entry: kept, content: { request, response: null } });
    expect(JSON.stringify(got!.content!.request)).toBe(JSON.stringify(request)); // key order as sent
    expect(await store.get(bare.id)).toStrictEqual({ entry: bare, content: null });
    expect(await store.get('no-such-id')).toBeNull();
    const columns = await pool.query(
      `SELECT table_name, column_name FROM information_schema.columns
        WHERE table_schema = 'apart' AND column_name IN ('request', 'response', 'model')
          AND table_name IN ('request_log', 'request_log_content') ORDER BY 1, 2`,
    );
    expect(columns.rows).toEqual([
      { table_name: 'request_log', column_name: 'model' },
      { table_name: 'request_log_content', column_name: 'request' },
      { table_name: 'request_log_content', column_name: 'response' },
    ]);
  });

  it('takes a NUL character in any string without failing the batch', async () => {
    const store = storeFor();
    const odd = entry({
      model: 'luna\u0000x',
      attempts: [{ kind: 'skipped', model: 'm\u0000', deployment: 'd', reason: 'r\u0000' }],
    });
    await store.append(records([odd]));
    const [stored] = (await store.query({ limit: 1 })).entries;
    expect(stored.model).toBe('luna\uFFFDx');
    expect(stored.attempts).toEqual([
      { kind: 'skipped', model: 'm\uFFFD', deployment: 'd', reason: 'r\uFFFD' },
    ]);
  });

  it('puts entries of three days in three day partitions, made on demand', async () => {
    const schema = 'days';
    const store = storeFor(schema);
    const days = ['2026-01-02T23:59:59.999Z', '2026-01-03T00:00:00.000Z', '2026-01-05T12:00:00.000Z'];
    await store.append(
      days.map((at) => ({ entry: entry({ at }), content: { request: {}, response: null } })),
    );
    const names = await partitionNames(schema, 'request_log');
    expect(names).toEqual(
      expect.arrayContaining(['request_log_p20260102', 'request_log_p20260103', 'request_log_p20260105']),
    );
    expect(names).not.toContain('request_log_p20260104');
    const placed = await pool.query(
      `SELECT tableoid::regclass::text AS partition, to_char(at, 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') AS at
         FROM days.request_log ORDER BY at`,
    );
    expect(placed.rows).toEqual([
      { partition: 'days.request_log_p20260102', at: days[0] },
      { partition: 'days.request_log_p20260103', at: days[1] },
      { partition: 'days.request_log_p20260105', at: days[2] },
    ]);
    const content = await pool.query(
      `SELECT tableoid::regclass::text AS partition FROM days.request_log_content`,
    );
    expect(content.rows.map((r: { partition: string }) => r.partition).sort()).toEqual([
      'days.request_log_content_p20260102',
      'days.request_log_content_p20260103',
      'days.request_log_content_p20260105',
    ]);
  });

  it('expires by dropping whole partitions: metadata past its days, content past its own, newer ones kept', async () => {
    const schema = 'expiry';
    const now = new Date('2026-11-27T06:00:00.000Z');
    // The store's clock is this test's: the partitions it makes ahead are counted from `now`, not from today.
    const store = storeFor(schema, { metadata: 30, content: 7 }, database.url, () => now);
    const at = (ms: number) => entry({ at: new Date(now.getTime() - ms).toISOString(), contentKept: true });
    const [d40, d10, d1] = [at(40 * DAY), at(10 * DAY), at(DAY)];
    // Content's retention boundary (7 days before now: 2026-11-20T06:00): the day that ended before it goes, the day
    // it falls in stays whole (an entry is kept at least its retention).
    const justOut = at(7 * DAY + 6 * 3_600_000 + 1); // 2026-11-19T23:59:59.999
    const justIn = at(7 * DAY - 3_600_000); // 2026-11-20T07:00
    const all = [d40, d10, justOut, justIn, d1];
    await store.append(all.map((e) => ({ entry: e, content: { request: { id: e.id }, response: 'ok' } })));
    await store.expire(now);

    expect(await partitionNames(schema, 'request_log')).toEqual([
      'request_log_p20261117', // 10 days ago: within 30
      'request_log_p20261119',
      'request_log_p20261120',
      'request_log_p20261126', // yesterday
      'request_log_p20261127', // today and the two days ahead, made by maintenance
      'request_log_p20261128',
      'request_log_p20261129',
    ]);
    expect(await partitionNames(schema, 'request_log_content')).toEqual([
      'request_log_content_p20261120',
      'request_log_content_p20261126',
      'request_log_content_p20261127',
      'request_log_content_p20261128',
      'request_log_content_p20261129',
    ]);
    const gone = await pool.query(
      `SELECT to_regclass('expiry.request_log_p20261018') AS m40, to_regclass('expiry.request_log_content_p20261018') AS c40,
              to_regclass('expiry.request_log_content_p20261117') AS c10,
              to_regclass('expiry.request_log_content_p20261119') AS c7`,
    );
    expect(gone.rows[0]).toEqual({ m40: null, c40: null, c10: null, c7: null });
    expect((await store.query({ limit: 10 })).entries.map((e) => e.id)).toEqual([
      d1.id,
      justIn.id,
      justOut.id,
      d10.id,
    ]);
    expect(await store.get(d40.id)).toBeNull();
    expect(await store.get(d10.id)).toStrictEqual({ entry: d10, content: null });
    expect((await store.get(justOut.id))?.content).toBeNull();
    expect((await store.get(justIn.id))?.content).toEqual({ request: { id: justIn.id }, response: 'ok' });
    expect((await store.get(d1.id))?.content).toEqual({ request: { id: d1.id }, response: 'ok' });
    const rows = await pool.query(
      `SELECT (SELECT count(*) FROM expiry.request_log)::int AS entries,
              (SELECT count(*) FROM expiry.request_log_content)::int AS contents`,
    );
    expect(rows.rows[0]).toEqual({ entries: 4, contents: 2 });
    // A day later the 10-day-old metadata is still kept (30 days), and a second run changes nothing else.
    await store.expire(new Date(now.getTime() + DAY));
    expect(await partitionNames(schema, 'request_log')).toContain('request_log_p20261117');
  });

  it('writes a new day from two replicas at once: the partition is made once, every entry kept', async () => {
    const [one, two] = [storeFor('race'), storeFor('race')];
    const day = (n: number) =>
      records([entry({ at: `2026-03-0${n}T12:00:00.000Z` }), entry({ at: `2026-03-0${n}T13:00:00.000Z` })]);
    await Promise.all([one.append(day(1)), two.append(day(1)), one.append(day(2)), two.append(day(2))]);
    expect(await partitionNames('race', 'request_log')).toEqual(
      expect.arrayContaining(['request_log_p20260301', 'request_log_p20260302']),
    );
    expect((await one.query({ limit: 100, to: '2026-03-03T00:00:00.000Z' })).entries).toHaveLength(8);
  });

  it('tells of a lost connection once, and of its return, and goes on working', async () => {
    const states: string[] = [];
    const store = new PostgresRequestLogStore({
      postgres: { url: database.url, schema: 'lost', poolSize: 2 },
      retentionDays: { metadata: 30, content: 7 },
      onConnection: (state, reason) => states.push(reason ? `${state} ${reason}` : state),
    });
    stores.push(store);
    await store.append(records([entry()]));
    // The server ends the store's idle connections (as a failover or a restart would).
    await pool.query(
      `SELECT pg_terminate_backend(pid) FROM pg_stat_activity
        WHERE datname = current_database() AND application_name = 'switchyard' AND pid <> pg_backend_pid()`,
    );
    await eventually(() => expect(states).toEqual(['lost 57P01']));
    expect((await store.query({ limit: 10 })).entries).toHaveLength(1);
    expect(states).toEqual(['lost 57P01', 'restored']);
  });

  it('rejects, without crashing or an unhandled error, when PostgreSQL is not there', async () => {
    const unhandled: unknown[] = [];
    const onUnhandled = (reason: unknown) => unhandled.push(reason);
    process.on('unhandledRejection', onUnhandled);
    try {
      const store = storeFor('down', {}, `postgres://postgres@127.0.0.1:${await freePort()}/nothing`);
      await expect(store.append(records([entry()]))).rejects.toThrow(/ECONNREFUSED|connect/);
      await expect(store.query({ limit: 10 })).rejects.toThrow();
      await expect(store.get('x')).rejects.toThrow();
      await expect(store.expire(new Date())).rejects.toThrow();
      await store.close();
      await new Promise((resolve) => setTimeout(resolve, 50));
      expect(unhandled).toEqual([]);
    } finally {
      process.off('unhandledRejection', onUnhandled);
    }
  });
});
