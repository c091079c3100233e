import { randomBytes } from 'node:crypto';
import Redis from 'ioredis';
import { RedisRequestLogStore } from '../../src/request-log/redis-request-log.repository';
import { buildConfig } from '../support/config';
import { logEntry } from '../support/request-log-entry-fixture';
import { deletePrefix, REDIS_URL } from '../support/test-gateway';

/**
 * The Redis store of the request log against a real Redis, under a private key prefix: idempotent appends,
 * newest-first paging across days and teams, the cap per team and day, and expiry of whole keys by retention
 * (metadata and content apart).
 */
describe('request log: the Redis store', () => {
  const prefix = `sy-test:${randomBytes(6).toString('hex')}:`;
  let redis: Redis;
  const DAY = 86_400_000;
  const today = Math.floor(Date.now() / DAY) * DAY;
  const at = (daysAgo: number, ms = 0) => new Date(today - daysAgo * DAY + 3_600_000 + ms).toISOString();
  const store = (requests: Record<string, unknown> = {}) =>
    new RedisRequestLogStore(
      redis,
      buildConfig({ admin: { apiKey: 'k' }, redis: { keyPrefix: prefix }, logging: { requests } }, {}),
    );

  beforeAll(() => {
    redis = new Redis(REDIS_URL);
  });
  afterAll(async () => {
    await deletePrefix(redis, prefix);
    await redis.quit();
  });

  it('keeps a batch appended twice once, with its content apart, and finds an entry by its id alone', async () => {
    const log = store();
    const batch = [
      {
        entry: logEntry('same-1', { team: 'once', at: at(0) }),
        content: { request: { a: 1 }, response: null },
      },
      { entry: logEntry('same-2', { team: 'once', at: at(0, 1) }) },
    ];
    await log.append(batch);
    await log.append(batch);
    const page = await log.query({ team: 'once', limit: 10 });
    expect(page.entries.map((e) => e.id)).toEqual(['same-2', 'same-1']);
    expect(page.next).toBeNull();
    expect(await log.get('same-1')).toEqual({
      entry: batch[0].entry,
      content: { request: { a: 1 }, response: null },
    });
    expect(await log.get('same-2')).toEqual({ entry: batch[1].entry, content: null });
    expect(await log.get('never')).toBeNull();
  });

  it('pages newest first across days and teams, same-millisecond entries by id, none twice or left out', async () => {
    const log = store();
    const entries = [];
    for (let i = 0; i < 12; i++)
      entries.push(
        logEntry(`p-${String(i).padStart(2, '0')}`, { team: i % 2 ? 'odd' : 'even', at: at(i % 3, 0) }),
      );
    await log.append(entries.map((entry) => ({ entry })));
    const expected = [...entries]
      .sort((a, b) => (a.at !== b.at ? (a.at < b.at ? 1 : -1) : a.id < b.id ? 1 : -1))
      .map((e) => e.id);
    const seen: string[] = [];
    let after: string | undefined;
    for (let pages = 0; pages < 10; pages++) {
      const page = await log.query({ teams: ['odd', 'even'], limit: 5, after });
      seen.push(...page.entries.map((e) => e.id));
      if (!page.next) break;
      after = page.next;
    }
    expect(seen).toEqual(expected);
    const odd = await log.query({ team: 'odd', limit: 100, from: at(1, -1) });
    expect(odd.entries.map((e) => e.id).sort()).toEqual(
      entries
        .filter((_, i) => i % 2 && i % 3 < 2)
        .map((e) => e.id)
        .sort(),
    );
  });

  it('keeps at most maxEntriesPerTeamPerDay a day: the oldest make way and are counted', async () => {
    const log = store({ redis: { maxEntriesPerTeamPerDay: 100 } });
    const first = Array.from({ length: 98 }, (_, i) => ({
      entry: logEntry(`cap-${1000 + i}`, { team: 'capped', at: at(0, i) }),
    }));
    expect(await log.append(first)).toEqual({ evicted: 0 });
    const more = Array.from({ length: 5 }, (_, i) => ({
      entry: logEntry(`cap-${2000 + i}`, { team: 'capped', at: at(0, 500 + i) }),
    }));
    expect(await log.append(more)).toEqual({ evicted: 3 });
    const page = await log.query({ team: 'capped', limit: 1000 });
    expect(page.entries).toHaveLength(100);
    expect(page.entries.at(-1)!.id).toBe('cap-1003');
    expect(await log.get('cap-1000')).toBeNull();
  });

  it('a filter that matches little answers after reading its budget, with a next that goes on from there', async () => {
    const log = store({ redis: { maxEntriesPerTeamPerDay: 100_000 } });
    const traceId = randomBytes(16).toString('hex');
    const entries = Array.from({ length: 6_000 }, (_, i) =>
      logEntry(`rare-${String(i).padStart(5, '0')}`, {
        team: 'rare',
        at: at(0, i),
        traceId: i === 0 ? traceId : null,
      }),
    );
    for (let i = 0; i < entries.length; i += 1_000)
      await log.append(entries.slice(i, i + 1_000).map((entry) => ({ entry })));
    const first = await log.query({ team: 'rare', traceId, limit: 10 });
    expect(first.entries).toEqual([]);
    expect(first.next).not.toBeNull();
    const second = await log.query({ team: 'rare', traceId, limit: 10, after: first.next! });
    expect(second.entries.map((e) => e.id)).toEqual(['rare-00000']);
    expect(second.next).toBeNull();
  });

  it("expires each day's keys whole: metadata after its days, content after its own", async () => {
    const log = store({ retentionDays: { metadata: 30, content: 7 } });
    await log.append([
      { entry: logEntry('ttl-today', { team: 'ttl', at: at(0) }), content: { request: 'x', response: null } },
      { entry: logEntry('ttl-old', { team: 'ttl', at: at(5) }), content: { request: 'y', response: null } },
    ]);
    const day = (daysAgo: number) => new Date(today - daysAgo * DAY).toISOString().slice(0, 10);
    const ttl = (key: string) => redis.ttl(`${prefix}reqlog:{ttl}:${key}`);
    const untilEndOf = (daysAfter: number, daysAgo: number) =>
      (today + (daysAfter + 1 - daysAgo) * DAY - Date.now()) / 1000;
    for (const [daysAgo, metadata, content] of [
      [0, 30, 7],
      [5, 30, 7],
    ]) {
      for (const part of ['entries', 'order']) {
        const left = await ttl(`${day(daysAgo)}:${part}`);
        expect(Math.abs(left - untilEndOf(metadata, daysAgo))).toBeLessThan(5);
      }
      expect(Math.abs((await ttl(`${day(daysAgo)}:content`)) - untilEndOf(content, daysAgo))).toBeLessThan(5);
    }
    expect(Math.abs((await redis.ttl(`${prefix}reqlog:ids:${day(5)}`)) - untilEndOf(30, 5))).toBeLessThan(5);
  });

  it('a day older than its retention is not looked for (its keys are gone or going)', async () => {
    const log = store({ retentionDays: { metadata: 2, content: 1 } });
    await log.append([{ entry: logEntry('late', { team: 'retained', at: at(4) }) }]);
    // Written with a retention already over: it expires at once (the least TTL) and no query reads its day.
    expect(
      await redis.ttl(
        `${prefix}reqlog:{retained}:${new Date(today - 4 * DAY).toISOString().slice(0, 10)}:entries`,
      ),
    ).toBeLessThanOrEqual(1);
    expect((await log.query({ team: 'retained', limit: 10 })).entries).toEqual([]);
  });
});
