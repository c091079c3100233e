import { Inject, Injectable } from '@nestjs/common';
import type Redis from 'ioredis';
import { batch } from '../redis/batch';
import { LuaScript } from '../redis/lua-script';
import { REDIS } from '../redis/redis.module';
import { RedisKeys } from '../redis/redis-keys';
import type { TokenFields, TokenRecords } from './token-records.repository';

/** KEYS[1] hash; ARGV field/value pairs. Writes only if the hash exists (never resurrects a deleted record). */
export const HSET_IF_EXISTS = new LuaScript<number>(
  'hsetIfExists',
  `
if redis.call('EXISTS', KEYS[1]) == 0 then return 0 end
redis.call('HSET', KEYS[1], unpack(ARGV))
return 1
`,
);

/** Tokens in Redis: a hash per token (`token:{id}`) and a set of ids per team (`team:{team}:tokens`). */
@Injectable()
export class RedisTokenRecords implements TokenRecords {
  constructor(
    @Inject(REDIS) private readonly redis: Redis,
    private readonly keys: RedisKeys,
  ) {
    HSET_IF_EXISTS.defineOn(redis);
  }

  async add(teamId: string, id: string, fields: TokenFields): Promise<void> {
    await this.redis.hset(this.keys.token(id), fields);
    await this.redis.sadd(this.keys.teamTokens(teamId), id);
  }

  read(id: string): Promise<TokenFields> {
    return this.redis.hgetall(this.keys.token(id));
  }

  async readMany(ids: string[]): Promise<TokenFields[]> {
    const rows = await batch(ids.map((id) => this.redis.hgetall(this.keys.token(id))));
    return rows.map(([error, fields]) => {
      if (error) throw error;
      return fields as TokenFields;
    });
  }

  idsOf(teamId: string): Promise<string[]> {
    return this.redis.smembers(this.keys.teamTokens(teamId));
  }

  async write(id: string, fields: TokenFields): Promise<void> {
    await this.redis.hset(this.keys.token(id), fields);
  }

  async writeIfExists(id: string, fields: TokenFields): Promise<boolean> {
    return (await HSET_IF_EXISTS.run(this.redis, [this.keys.token(id)], Object.entries(fields).flat())) === 1;
  }

  async remove(id: string): Promise<void> {
    await this.redis.del(this.keys.token(id));
  }
}
