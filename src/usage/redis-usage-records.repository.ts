import { Inject, Injectable } from '@nestjs/common';
import type Redis from 'ioredis';
import { GatewayConfig } from '../config/config.schema';
import { batch } from '../redis/batch';
import { LuaScript } from '../redis/lua-script';
import { REDIS, REDIS_USAGE, redisReady } from '../redis/redis.module';
import { RedisKeys } from '../redis/redis-keys';
import { aMasterHasNoReplica, waitForReplicas } from './replica-ack';
import { counterIncrements, recordFields } from './usage-record';
import type { EstimateCount, RecordToWrite, Stored, UsageRecords } from './usage-records.repository';

/** A written record's marker lives this long: a retry later than that would count twice. */
const SEEN_TTL_SECONDS = 7 * 86_400;

/**
 * One usage record, written exactly once: one record, and its counts in the counters, per request.
 *
 * KEYS: [1] the record's marker, [2] the team's records stream, [3] the day counters of the record's day, [4] the
 * team's in-flight hash, then L limit counters to settle, then the concurrency lease sets to release, then D more
 * day counters (other days an estimate of this request may have been counted on).
 * ARGV: [1] marker ttl, [2] stream MINID (trim bound), [3] counters ttl, [4] the record id, [5] L, [6] number of
 * counter increments m, [7] `real` (the request's own record) or `estimate` (a survivor's, for a request whose
 * replica stopped renewing its lease: usage/inflight-leases.ts), [8] D, [9] the record's day, then the D days of
 * the extra day keys, then m (field, amount) pairs, then one delta per limit counter, then the record's field/value
 * pairs.
 *
 * The marker says what was written. A real record's is its result code ('1'; '2' or '3' when it replaced an
 * estimate), so a retried write answers the same as the write it repeats. An estimate's is JSON: its day, its
 * stream entry, the counter increments it made, and whether a replica has counted it in its metrics yet
 * (`metrics`: pending or counted; MARK_ESTIMATE_COUNTED).
 *
 * Returns 0: nothing written (a record with this id was written already, or an estimate whose day is not among
 * the keys); 1: written; 2: written in place of an estimate not yet counted in metrics; 3: in place of one counted
 * already. Replacing takes the estimate's increments off the counters of its day and deletes its stream entry, in
 * the same script that writes the real record: the counters never show both, nor neither. (An estimate settles no
 * limit counter, so what the request reserved is still there for the real record to settle.)
 */
const RECORD_USAGE = new LuaScript<number>(
  'recordUsage',
  `
local limitKeys = tonumber(ARGV[5])
local m = tonumber(ARGV[6])
local kind = ARGV[7]
local otherDays = tonumber(ARGV[8])
local day = ARGV[9]
local lastLeaseKey = #KEYS - otherDays
local result = 1
local marker = redis.call('GET', KEYS[1])
if marker then
  if string.sub(marker, 1, 1) ~= '{' then
    if kind == 'real' then return tonumber(marker) or 0 end
    return 0
  end
  if kind ~= 'real' then return 0 end
  local estimate = cjson.decode(marker)
  local estimateDay = nil
  if estimate.day == day then estimateDay = KEYS[3] end
  for i = 1, otherDays do
    if ARGV[9 + i] == estimate.day then estimateDay = KEYS[lastLeaseKey + i] end
  end
  if estimateDay == nil then return 0 end
  for i = 1, #estimate.inc, 2 do
    if redis.call('HINCRBY', estimateDay, estimate.inc[i], -tonumber(estimate.inc[i + 1])) == 0 then redis.call('HDEL', estimateDay, estimate.inc[i]) end
  end
  redis.call('XDEL', KEYS[2], estimate.entry)
  if estimate.metrics == 'pending' then result = 2 else result = 3 end
end
local at = 10 + otherDays
local increments = {}
for i = 1, m do
  redis.call('HINCRBY', KEYS[3], ARGV[at], tonumber(ARGV[at + 1]))
  increments[#increments + 1] = ARGV[at]
  increments[#increments + 1] = ARGV[at + 1]
  at = at + 2
end
if redis.call('TTL', KEYS[3]) < 0 then redis.call('EXPIRE', KEYS[3], tonumber(ARGV[3])) end
for k = 5, 4 + limitKeys do
  local delta = tonumber(ARGV[at])
  at = at + 1
  -- Settle only a window that still exists: an expired window has nothing left to correct.
  if delta ~= 0 and redis.call('EXISTS', KEYS[k]) == 1 then redis.call('INCRBY', KEYS[k], delta) end
end
for k = 5 + limitKeys, lastLeaseKey do redis.call('ZREM', KEYS[k], ARGV[4]) end
redis.call('HDEL', KEYS[4], ARGV[4])
local record = {}
for i = at, #ARGV do record[#record + 1] = ARGV[i] end
local entry = redis.call('XADD', KEYS[2], 'MINID', ARGV[2], '*', unpack(record))
if kind == 'estimate' then
  redis.call('SET', KEYS[1], cjson.encode({ day = day, entry = entry, inc = increments, metrics = 'pending' }), 'EX', tonumber(ARGV[1]))
else
  redis.call('SET', KEYS[1], tostring(result), 'EX', tonumber(ARGV[1]))
end
return result
`,
);

/**
 * KEYS[1] a record's marker. The survivor that wrote an estimate counts it in its metrics once the request's own
 * record has had time to replace it: 1 when the caller is to count it now (and the marker says it is counted, so
 * no other replica does); 0 when it must not (replaced by the real record, or counted already); -1 when there is
 * no marker (the estimate is not written yet, or expired).
 */
const MARK_ESTIMATE_COUNTED = new LuaScript<number>(
  'markEstimateCounted',
  `
local marker = redis.call('GET', KEYS[1])
if not marker then return -1 end
if string.sub(marker, 1, 1) ~= '{' then return 0 end
local estimate = cjson.decode(marker)
if estimate.metrics ~= 'pending' then return 0 end
estimate.metrics = 'counted'
redis.call('SET', KEYS[1], cjson.encode(estimate), 'KEEPTTL')
return 1
`,
);

/**
 * KEYS: hashes (one team's day counters). Returns each one's HGETALL, flat field/value lists, in order: a team's
 * whole date range in one round trip instead of one command per day (an org-wide usage view over 30 days and
 * 1,000 teams was 30,000 commands).
 */
const HGETALL_MANY = new LuaScript<string[][]>(
  'hgetallMany',
  `
local out = {}
for i = 1, #KEYS do out[i] = redis.call('HGETALL', KEYS[i]) end
return out
`,
);

const STORED: Record<number, Stored> = {
  0: 'duplicate',
  1: 'written',
  2: 'replaced-estimate',
  3: 'replaced-counted-estimate',
};
const ESTIMATE_COUNT: Record<number, EstimateCount> = { 1: 'count', 0: 'skip', [-1]: 'missing' };

/**
 * Usage in Redis: each team's records (a Stream, `usage:{team}:records`), its counters per UTC day (a hash per day)
 * and a marker per written record (`usage:{team}:seen:<id>`), all under the team's hash tag. Records are written on
 * the writer's own connection (its WAIT for replicas blocks a connection, and must never block admissions); reads
 * and the estimate markers go on the command connection.
 */
@Injectable()
export class RedisUsageRecords implements UsageRecords {
  constructor(
    @Inject(REDIS_USAGE) private readonly writer: Redis,
    @Inject(REDIS) private readonly redis: Redis,
    private readonly keys: RedisKeys,
    private readonly config: GatewayConfig,
  ) {
    RECORD_USAGE.defineOn(writer);
    MARK_ESTIMATE_COUNTED.defineOn(redis);
    HGETALL_MANY.defineOn(redis);
  }

  get writable(): boolean {
    return redisReady(this.writer);
  }

  onWritable(listener: () => void): void {
    this.writer.on('ready', listener);
  }

  async write(records: RecordToWrite[], now: number): Promise<Array<Stored | Error>> {
    const minId = `${now - this.config.usage.recordRetentionDays * 86_400_000}-0`;
    const counterTtl = this.config.usage.counterRetentionDays * 86_400;
    const answers = await batch(
      records.map(({ record, settle, concurrencyKeys, estimate, otherDays }) => {
        const increments = counterIncrements(record);
        const day = record.at.slice(0, 10);
        const keys = [
          this.keys.usageSeen(record.team, record.id),
          this.keys.usageRecords(record.team),
          this.keys.usageDay(record.team, day),
          this.keys.inflight(record.team),
          ...settle.keys,
          ...concurrencyKeys,
          ...otherDays.map((other) => this.keys.usageDay(record.team, other)),
        ];
        return RECORD_USAGE.run(this.writer, keys, [
          SEEN_TTL_SECONDS,
          minId,
          counterTtl,
          record.id,
          settle.keys.length,
          increments.length,
          estimate ? 'estimate' : 'real',
          otherDays.length,
          day,
          ...otherDays,
          ...increments.flat(),
          ...settle.deltas,
          ...recordFields(record),
        ]);
      }),
    );
    return answers.map(([error, answer]) => error ?? STORED[Number(answer)] ?? 'written');
  }

  replicated(replicas: number, timeoutMs: number): Promise<boolean> {
    return waitForReplicas(this.writer, replicas, timeoutMs);
  }

  aMasterHasNoReplica(): Promise<boolean> {
    return aMasterHasNoReplica(this.writer);
  }

  async countEstimate(team: string, recordId: string): Promise<EstimateCount> {
    const answer = await MARK_ESTIMATE_COUNTED.run(this.redis, [this.keys.usageSeen(team, recordId)], []);
    return ESTIMATE_COUNT[Number(answer)] ?? 'skip';
  }

  async dayCounters(teams: string[], days: string[]): Promise<Array<Array<Record<string, string>>>> {
    // One script per team reads all its days (its keys share the team's slot); teams are separate commands.
    const perTeam = await batch(
      teams.map((team) =>
        HGETALL_MANY.run(
          this.redis,
          days.map((day) => this.keys.usageDay(team, day)),
          [],
        ),
      ),
    );
    return perTeam.map(([error, hashes]) => {
      if (error) throw error;
      return (hashes as string[][]).map(pairsToObject);
    });
  }

  records(team: string, end: string, limit: number): Promise<Array<[string, string[]]>> {
    return this.redis.xrevrange(this.keys.usageRecords(team), end, '-', 'COUNT', limit);
  }
}

/** A flat HGETALL reply as Lua returns it ([field, value, ...]) -> an object. */
function pairsToObject(flat: string[]): Record<string, string> {
  const out: Record<string, string> = {};
  for (let i = 0; i < flat.length; i += 2) out[flat[i]] = flat[i + 1];
  return out;
}
