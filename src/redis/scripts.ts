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

/** Every script by its command name (`redis.<name>(...)`); numberOfKeys when fixed, else passed first. */
const SCRIPTS: Record<string, { lua: string; numberOfKeys?: number }> = {
  createHashIfMissing: { numberOfKeys: 1, lua: CREATE_HASH_IF_MISSING },
  hsetIfExists: { numberOfKeys: 1, lua: HSET_IF_EXISTS },
  hsetIfFieldsAre: { numberOfKeys: 1, lua: HSET_IF_FIELDS_ARE },
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
  }
}
