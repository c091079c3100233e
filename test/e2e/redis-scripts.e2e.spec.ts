import { randomBytes } from 'node:crypto';
import Redis from 'ioredis';
import { AppLogger } from '../../src/common/logging/logger';
import { buildConfig } from '../support/config';
import { InFlightTracker } from '../../src/lifecycle/in-flight.tracker';
import { MetricsService } from '../../src/metrics/metrics.service';
import { LIMIT_CATALOGUE, type LimitName } from '../../src/core/limit-catalogue';
import type { AdmitCall, CounterTake } from '../../src/limits/limit-counters.repository';
import { windowOf } from '../../src/limits/limit-windows';
import { RedisLimitCounters } from '../../src/limits/redis-limit-counters.repository';
import { RedisKeys } from '../../src/redis/redis-keys';
import { RedisMcpSessionRecords } from '../../src/mcp/redis-mcp-session-records.repository';
import { assertWithinTeamAdminBound } from '../../src/admin/team-admin-changes';
import { RedisTeamRecords } from '../../src/teams/redis-team-records.repository';
import { TeamStore } from '../../src/teams/team.store';
import { counterField, type UsageRecord } from '../../src/usage/usage-record';
import { RedisUsageRecords } from '../../src/usage/redis-usage-records.repository';
import { UsageWriter, type PendingUsage, type WriteResult } from '../../src/usage/usage-writer';
import { deletePrefix, REDIS_URL } from '../support/test-gateway';
import { usageRecord } from '../support/usage-record-fixture';

/**
 * The Lua scripts against a real Redis (127.0.0.1:6379), under a private key prefix: what makes a usage record
 * count exactly once, what makes admission exact to the limit, and what keeps a team within its ceiling.
 */
describe('Redis scripts', () => {
  const prefix = `sy-test:${randomBytes(6).toString('hex')}:`;
  const keys = new RedisKeys(prefix);
  const config = buildConfig({ admin: { apiKey: 'k' } }, {});
  let redis: Redis;

  beforeAll(() => {
    redis = new Redis(REDIS_URL);
  });
  afterAll(async () => {
    await deletePrefix(redis, prefix);
    await redis.quit();
  });

  describe('recordUsage (through the usage writer)', () => {
    const record = (id: string, team = 'scripts'): UsageRecord => usageRecord(id, { team });
    const writer = () =>
      new UsageWriter(
        new RedisUsageRecords(redis, redis, keys, config),
        config,
        new MetricsService(config, new InFlightTracker()),
        new AppLogger('fatal', { write: () => undefined }),
      );
    /** Enqueues and resolves with how the write went (the writer's own report, not a poll). */
    const write = (usageWriter: UsageWriter, pending: Omit<PendingUsage, 'onWritten'>) =>
      new Promise<WriteResult>((resolve) => usageWriter.enqueue({ ...pending, onWritten: resolve }));

    it('a record written twice with the same id counts once: counters, stream, limit settlement, lease', async () => {
      const limitKey = `${prefix}limit:{scripts}:tpm`;
      await redis.set(limitKey, 100); // the reservation: 100 tokens
      await redis.hset(keys.inflight('scripts'), 'r1', '{}');
      const pending = {
        record: record('r1'),
        settle: { keys: [limitKey], deltas: [-85] }, // 100 reserved, 15 used
        concurrencyKeys: [],
      };
      // A batch retried after a dropped connection sends the same record again, possibly from another writer.
      expect(await write(writer(), pending)).toBe('written');
      expect(await write(writer(), pending)).toBe('written'); // the marker answers what the first write did
      const day = await redis.hgetall(keys.usageDay('scripts', '2026-11-21'));
      expect(day).toEqual({
        [counterField('requests', '0123456789abcdef', 'm')]: '1',
        [counterField('ok', '0123456789abcdef', 'm')]: '1',
        [counterField('prompt', '0123456789abcdef', 'm')]: '10',
        [counterField('completion', '0123456789abcdef', 'm')]: '5',
        // Spent tokens at a known price (0 here): counted once too, so the usage API shows a known cost.
        [counterField('cost_known', '0123456789abcdef', 'm')]: '1',
      });
      expect(await redis.xlen(keys.usageRecords('scripts'))).toBe(1);
      expect(await redis.get(limitKey)).toBe('15');
      expect(await redis.hexists(keys.inflight('scripts'), 'r1')).toBe(0);
    });

    it('two records with different ids both count', async () => {
      const usageWriter = writer();
      const none = { settle: { keys: [], deltas: [] }, concurrencyKeys: [] };
      expect(await write(usageWriter, { record: record('r2', 'two'), ...none })).toBe('written');
      expect(await write(usageWriter, { record: record('r3', 'two'), ...none })).toBe('written');
      const day = await redis.hgetall(keys.usageDay('two', '2026-11-21'));
      expect(day[counterField('requests', '0123456789abcdef', 'm')]).toBe('2');
      expect(await redis.xlen(keys.usageRecords('two'))).toBe(2);
    });
  });

  describe('admission (RedisLimitCounters)', () => {
    const counters = () => new RedisLimitCounters(redis, keys);
    const take = (limit: LimitName, max: number, cost: number, tokenId?: string): CounterTake => ({
      teamId: 'admit',
      tokenId,
      limit,
      window: LIMIT_CATALOGUE[limit].window ? windowOf(limit, Date.now()) : undefined,
      max,
      cost,
    });
    const admit = (takes: CounterTake[], recordId = 'r', inflight?: AdmitCall['inflight']) =>
      counters().admit({ now: Date.now(), recordId, leaseMs: 30_000, takes, inflight });

    it('admits a request that takes the counter exactly to its limit, and refuses one past it', async () => {
      const first = await admit([take('requestsPerMinute', 10, 10)]);
      expect(first).toMatchObject({ refused: -1, values: [10] });
      expect(await admit([take('requestsPerMinute', 10, 1)])).toMatchObject({ refused: 0, values: [10] });
      const [counter] = first.counters;
      expect(await redis.get(counter)).toBe('10'); // refused: the counter is unchanged
      expect(await redis.ttl(counter)).toBeGreaterThan(0);
    });

    it('takes all or nothing across several limits, naming the first that refused', async () => {
      const b = take('tokensPerDay', 10, 8, 'tok-b');
      await admit([b]);
      const answer = await admit([take('tokensPerMinute', 100, 5, 'tok-b'), { ...b, cost: 5 }]);
      expect(answer).toMatchObject({ refused: 1, values: [0, 8] });
      expect(await redis.get(answer.counters[0])).toBeNull();
      expect(await redis.get(answer.counters[1])).toBe('8');
    });

    it('leases: one per request in flight, the in-flight lease written with them, an expired lease dropped', async () => {
      const lease = take('concurrentRequests', 1, 1, 'tok-c');
      const inflight = { key: keys.inflight('admit'), value: (sets: string[]) => JSON.stringify(sets) };
      const first = await admit([lease], 'c1', inflight);
      expect(first).toMatchObject({ refused: -1, values: [1] });
      expect(await redis.hget(keys.inflight('admit'), 'c1')).toBe(JSON.stringify(first.counters));
      expect(await admit([lease], 'c2', inflight)).toMatchObject({ refused: 0, values: [1] });
      expect(await redis.hexists(keys.inflight('admit'), 'c2')).toBe(0);
      await redis.zadd(first.counters[0], 'XX', String(Date.now() - 1), 'c1'); // its replica stopped renewing it
      expect(await admit([lease], 'c3')).toMatchObject({ refused: -1, values: [1] });
      expect(await redis.zrange(first.counters[0], '0', '-1')).toEqual(['c3']);
    });
  });

  describe("a team-admin's change and a lowered ceiling (TeamStore over RedisTeamRecords: hsetIfFieldsAre)", () => {
    /** The Redis repository, with a hook run once after the next read is answered (before its caller goes on). */
    class InterleavedTeamRecords extends RedisTeamRecords {
      afterRead?: () => Promise<void>;
      override async read(id: string) {
        const fields = await super.read(id);
        const hook = this.afterRead;
        this.afterRead = undefined;
        await hook?.();
        return fields;
      }
    }
    const store = (records: RedisTeamRecords) => new TeamStore(records, config);

    it('checks the change again against a ceiling lowered between its read and its write', async () => {
      const records = new InterleavedTeamRecords(redis, keys);
      const teams = store(records);
      await teams.create('cas-a', {
        limits: { requestsPerMinute: 50 },
        ceiling: { limits: { requestsPerMinute: 200 } },
      });
      records.afterRead = async () => {
        await teams.update('cas-a', { ceiling: { limits: { requestsPerMinute: 100 } } });
      };
      await expect(
        teams.update('cas-a', { limits: { requestsPerMinute: 150 } }, assertWithinTeamAdminBound),
      ).rejects.toMatchObject({ status: 403, code: 'permission_denied', param: 'limits.requestsPerMinute' });
      expect(await redis.hget(keys.team('cas-a'), 'limits')).toBe('{"requestsPerMinute":50}');
      expect(await redis.hget(keys.team('cas-a'), 'ceiling')).toBe('{"limits":{"requestsPerMinute":100}}');
    });

    it("clamps a team-admin's value written between an org-admin's read and its lowering of the ceiling", async () => {
      const records = new InterleavedTeamRecords(redis, keys);
      const teams = store(records);
      await teams.create('cas-b', {
        limits: { requestsPerMinute: 50 },
        ceiling: { limits: { requestsPerMinute: 200 } },
      });
      records.afterRead = async () => {
        await teams.update('cas-b', { limits: { requestsPerMinute: 180 } }, assertWithinTeamAdminBound);
      };
      const { team, clamped } = await teams.update('cas-b', {
        ceiling: { limits: { requestsPerMinute: 100 } },
      });
      expect(team.limits).toEqual({ requestsPerMinute: 100 });
      expect(clamped).toEqual({
        limits: { from: { requestsPerMinute: 180 }, to: { requestsPerMinute: 100 } },
      });
    });
  });

  describe('MCP sessions (RedisMcpSessionRecords)', () => {
    const day = 24 * 3600;
    const t0 = 1_800_000_000_000;

    it('keeps at most maxPerToken per token, dropping the one written longest ago; other tokens untouched', async () => {
      const sessions = new RedisMcpSessionRecords(redis, keys);
      await sessions.save('tok-b', 'b1', 'B', { nowMs: t0, ttlSeconds: day, maxPerToken: 3 });
      for (const [i, digest] of ['a1', 'a2', 'a3'].entries())
        await sessions.save('tok-a', digest, digest, { nowMs: t0 + i, ttlSeconds: day, maxPerToken: 3 });
      // a1 renewed: a2 is now the oldest, and a fourth session ends it.
      await sessions.refresh('tok-a', 'a1', 'a1+', { nowMs: t0 + 10, ttlSeconds: day });
      await sessions.save('tok-a', 'a4', 'a4', { nowMs: t0 + 11, ttlSeconds: day, maxPerToken: 3 });
      const at = { nowMs: t0 + 12, ttlSeconds: day };
      expect(await sessions.find('tok-a', 'a2', at)).toBeNull();
      expect(await sessions.find('tok-a', 'a1', at)).toBe('a1+');
      expect(await sessions.find('tok-a', 'a4', at)).toBe('a4');
      expect(await redis.hlen(keys.mcpSessions('tok-a'))).toBe(3);
      expect(await redis.zcard(keys.mcpSessionTimes('tok-a'))).toBe(3);
      expect(await sessions.find('tok-b', 'b1', at)).toBe('B');
      expect(await sessions.find('tok-b', 'a1', at)).toBeNull();
      const ttl = await redis.ttl(keys.mcpSessions('tok-a'));
      expect(ttl).toBeGreaterThan(day - 60);
    });

    it('a session a TTL past its last write is gone: not found, not renewed, dropped at the next save', async () => {
      const sessions = new RedisMcpSessionRecords(redis, keys);
      await sessions.save('tok-c', 'c1', 'C', { nowMs: t0, ttlSeconds: 60, maxPerToken: 100 });
      expect(await sessions.find('tok-c', 'c1', { nowMs: t0 + 59_999, ttlSeconds: 60 })).toBe('C');
      const later = { nowMs: t0 + 60_000, ttlSeconds: 60 };
      expect(await sessions.find('tok-c', 'c1', later)).toBeNull();
      await sessions.refresh('tok-c', 'c1', 'C+', later);
      expect(await sessions.find('tok-c', 'c1', { nowMs: t0, ttlSeconds: 60 })).toBe('C');
      await sessions.save('tok-c', 'c2', 'C2', { ...later, maxPerToken: 100 });
      expect(await redis.hkeys(keys.mcpSessions('tok-c'))).toEqual(['c2']);
      await sessions.remove('tok-c', 'c2');
      expect(await sessions.find('tok-c', 'c2', later)).toBeNull();
    });
  });
});
