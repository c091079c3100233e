import { Inject, Injectable } from '@nestjs/common';
import type Redis from 'ioredis';
import { batch } from '../redis/batch';
import { LuaScript } from '../redis/lua-script';
import { REDIS } from '../redis/redis.module';
import { RedisKeys } from '../redis/redis-keys';
import type { GuardedWrite, TeamFields, TeamRecords } from './team-records.repository';

/** KEYS[1] hash; ARGV field/value pairs. Writes the hash only if it does not exist yet. */
const CREATE_HASH_IF_MISSING = new LuaScript<number>(
  'createHashIfMissing',
  `
if redis.call('EXISTS', KEYS[1]) == 1 then return 0 end
redis.call('HSET', KEYS[1], unpack(ARGV))
return 1
`,
);

/**
 * Compare-and-set on a hash. KEYS[1] hash; ARGV[1] g, then g (field, expected value) pairs ('' for absent), then
 * the field/value pairs to write. Writes only if the hash exists (-1 if not) and each guarded field still holds
 * its expected value (0 if one changed: the caller reads, merges and tries again); 1 once written.
 */
const HSET_IF_FIELDS_ARE = new LuaScript<number>(
  'hsetIfFieldsAre',
  `
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
`,
);

const GUARDED: Record<number, GuardedWrite> = { 1: 'written', 0: 'changed', [-1]: 'missing' };

/**
 * Teams in Redis: a hash per team (`team:{id}`, the team's hash tag shared with its usage and limit counters) and
 * the `teams` index set of ids.
 */
@Injectable()
export class RedisTeamRecords implements TeamRecords {
  constructor(
    @Inject(REDIS) private readonly redis: Redis,
    private readonly keys: RedisKeys,
  ) {
    CREATE_HASH_IF_MISSING.defineOn(redis);
    HSET_IF_FIELDS_ARE.defineOn(redis);
  }

  async createIfMissing(id: string, fields: TeamFields): Promise<boolean> {
    const created = await CREATE_HASH_IF_MISSING.run(
      this.redis,
      [this.keys.team(id)],
      Object.entries(fields).flat(),
    );
    // The index lives in another Cluster slot, so it is a second command; readers skip ids without a team.
    await this.redis.sadd(this.keys.teamIndex(), id);
    return created === 1;
  }

  read(id: string): Promise<TeamFields> {
    return this.redis.hgetall(this.keys.team(id));
  }

  async readMany(ids: string[]): Promise<TeamFields[]> {
    const rows = await batch(ids.map((id) => this.redis.hgetall(this.keys.team(id))));
    return rows.map(([error, fields]) => {
      if (error) throw error;
      return fields as TeamFields;
    });
  }

  ids(): Promise<string[]> {
    return this.redis.smembers(this.keys.teamIndex());
  }

  async writeIfUnchanged(id: string, guards: TeamFields, fields: TeamFields): Promise<GuardedWrite> {
    const guarded = Object.entries(guards);
    const written = await HSET_IF_FIELDS_ARE.run(
      this.redis,
      [this.keys.team(id)],
      [guarded.length, ...guarded.flat(), ...Object.entries(fields).flat()],
    );
    return GUARDED[Number(written)] ?? 'changed';
  }

  async remove(id: string): Promise<void> {
    await this.redis.del(this.keys.team(id), this.keys.teamTokens(id));
    await this.redis.srem(this.keys.teamIndex(), id);
  }
}
