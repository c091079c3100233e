import { createHash } from 'node:crypto';
import type Redis from 'ioredis';
import type { Result } from 'ioredis';

/**
 * The Lua scripts, registered on every connection with `defineCommand` (ioredis runs
 * them by EVALSHA and falls back to EVAL after a Redis restart). Each script touches
 * only keys passed in KEYS, all with one team's hash tag, so they are Cluster-safe.
 */

/** KEYS[1] hash; ARGV field/value pairs. Writes the hash only if it does not exist yet. */
const CREATE_HASH_IF_MISSING = `
if redis.call('EXISTS', KEYS[1]) == 1 then return 0 end
redis.call('HSET', KEYS[1], unpack(ARGV))
return 1
`;

/** KEYS[1] hash; ARGV field/value pairs. Writes only if the hash exists (never resurrects a deleted record). */
const HSET_IF_EXISTS = `
if redis.call('EXISTS', KEYS[1]) == 0 then return 0 end
redis.call('HSET', KEYS[1], unpack(ARGV))
return 1
`;

/**
 * Compare-and-set on a hash. KEYS[1] hash; ARGV[1] g, then g (field, expected value) pairs ('' for absent), then
 * the field/value pairs to write. Writes only if the hash exists (-1 if not) and each guarded field still holds
 * its expected value (0 if one changed: the caller reads, merges and tries again); 1 once written.
 */
const HSET_IF_FIELDS_ARE = `
if redis.call('EXISTS', KEYS[1]) == 0 then return -1 end
local g = tonumber(ARGV[1])
for i = 0, g - 1 do
  local field, expected = ARGV[2 + 2 * i], ARGV[3 + 2 * i]
  if (redis.call('HGET', KEYS[1], field) or '') ~= expected then return 0 end
end
local writes = {}
for i = 2 + 2 * g, #ARGV do writes[#writes + 1] = ARGV[i] end
redis.call('HSET', KEYS[1], unpack(writes))
return 1
`;

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
const RECORD_USAGE = `
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
`;

/**
 * KEYS[1] a record's marker. The survivor that wrote an estimate counts it in its metrics once the request's own
 * record has had time to replace it: 1 when the caller is to count it now (and the marker says it is counted, so
 * no other replica does); 0 when it must not (replaced by the real record, or counted already); -1 when there is
 * no marker (the estimate is not written yet, or expired).
 */
const MARK_ESTIMATE_COUNTED = `
local marker = redis.call('GET', KEYS[1])
if not marker then return -1 end
if string.sub(marker, 1, 1) ~= '{' then return 0 end
local estimate = cjson.decode(marker)
if estimate.metrics ~= 'pending' then return 0 end
estimate.metrics = 'counted'
redis.call('SET', KEYS[1], cjson.encode(estimate), 'KEEPTTL')
return 1
`;

/**
 * KEYS: hashes (one team's day counters). Returns each one's HGETALL, flat field/value lists, in order: a team's
 * whole date range in one round trip instead of one command per day (an org-wide usage view over 30 days and
 * 1,000 teams was 30,000 commands).
 */
const HGETALL_MANY = `
local out = {}
for i = 1, #KEYS do out[i] = redis.call('HGETALL', KEYS[i]) end
return out
`;

/** Every script by its command name (`redis.<name>(...)`); numberOfKeys when fixed, else passed first. */
const SCRIPTS: Record<string, { lua: string; numberOfKeys?: number }> = {
  createHashIfMissing: { numberOfKeys: 1, lua: CREATE_HASH_IF_MISSING },
  hsetIfExists: { numberOfKeys: 1, lua: HSET_IF_EXISTS },
  hsetIfFieldsAre: { numberOfKeys: 1, lua: HSET_IF_FIELDS_ARE },
  recordUsage: { lua: RECORD_USAGE },
  markEstimateCounted: { numberOfKeys: 1, lua: MARK_ESTIMATE_COUNTED },
  hgetallMany: { lua: HGETALL_MANY },
};

export function registerScripts(redis: Redis): void {
  if (redis.isCluster) return registerClusterScripts(redis);
  for (const [name, definition] of Object.entries(SCRIPTS)) redis.defineCommand(name, definition);
}

/**
 * On a Cluster, the same commands as plain EVALSHA calls. ioredis auto-pipelines a command by the node owning its
 * first key, and it finds EVALSHA's keys (after the key count) but not a defineCommand script's: it takes the
 * script's first argument, so a script went into another node's pipeline, where it never settled (ioredis issues
 * #536, #2109). As EVALSHA each script is pipelined with the other commands for its node. A node that does not
 * have the script (a replica just promoted, a restarted server) answers NOSCRIPT: the call is repeated as EVAL,
 * which also loads it there.
 */
function registerClusterScripts(redis: Redis): void {
  const commands = redis as unknown as Record<string, (...args: Array<string | number>) => Promise<unknown>>;
  for (const [name, { lua, numberOfKeys }] of Object.entries(SCRIPTS)) {
    const sha = createHash('sha1').update(lua).digest('hex');
    commands[name] = (...args) => {
      const keysThenArgs = numberOfKeys === undefined ? args : [numberOfKeys, ...args];
      return redis.call('EVALSHA', sha, ...keysThenArgs).catch((error: Error) => {
        if (!error.message.startsWith('NOSCRIPT')) throw error;
        return redis.call('EVAL', lua, ...keysThenArgs);
      });
    };
  }
}

declare module 'ioredis' {
  interface RedisCommander<Context> {
    createHashIfMissing(key: string, ...fieldValues: string[]): Result<number, Context>;
    hsetIfExists(key: string, ...fieldValues: string[]): Result<number, Context>;
    /** Guarded field count, then (field, expected) pairs, then the field/value pairs to write: 1 written, 0 changed, -1 no hash. */
    hsetIfFieldsAre(key: string, guarded: number, ...fieldsThenValues: string[]): Result<number, Context>;
    recordUsage(numberOfKeys: number, ...keysThenArgs: (string | number)[]): Result<number, Context>;
    markEstimateCounted(marker: string): Result<number, Context>;
    hgetallMany(numberOfKeys: number, ...keys: string[]): Result<string[][], Context>;
  }
}
