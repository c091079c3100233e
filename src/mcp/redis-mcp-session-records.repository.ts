import { Inject, Injectable } from '@nestjs/common';
import type Redis from 'ioredis';
import { LuaScript } from '../redis/lua-script';
import { REDIS, redisReady } from '../redis/redis.module';
import { RedisKeys } from '../redis/redis-keys';
import type { McpSessionRecords } from './mcp-session-records.repository';

/*
 * A token's sessions are two keys under its hash tag: KEYS[1] a HASH digest -> record, KEYS[2] a ZSET digest -> when
 * the session was last saved or refreshed (ms). A session is live while that time is within the TTL, so a check is
 * one HGET and one ZSCORE. Both keys expire a TTL after the token's last write, so an idle token's sessions vanish.
 */

/** ARGV: digest, record, now (ms), TTL (s), most sessions per token. Drops expired entries, then the oldest over the cap. */
const SAVE = new LuaScript<number>(
  'mcpSessionSave',
  `
local now, ttl, max = tonumber(ARGV[3]), tonumber(ARGV[4]), tonumber(ARGV[5])
redis.call('HSET', KEYS[1], ARGV[1], ARGV[2])
redis.call('ZADD', KEYS[2], now, ARGV[1])
local expired = redis.call('ZRANGEBYSCORE', KEYS[2], '-inf', now - ttl * 1000)
for _, digest in ipairs(expired) do
  redis.call('HDEL', KEYS[1], digest)
  redis.call('ZREM', KEYS[2], digest)
end
local over = redis.call('ZCARD', KEYS[2]) - max
if over > 0 then
  local oldest = redis.call('ZPOPMIN', KEYS[2], over)
  for i = 1, #oldest, 2 do redis.call('HDEL', KEYS[1], oldest[i]) end
end
redis.call('EXPIRE', KEYS[1], ttl)
redis.call('EXPIRE', KEYS[2], ttl)
return redis.call('ZCARD', KEYS[2])
`,
);

/** ARGV: digest, record, now (ms), TTL (s). Renews a live session only (an ended or evicted one stays ended). */
const REFRESH = new LuaScript<number>(
  'mcpSessionRefresh',
  `
local now, ttl = tonumber(ARGV[3]), tonumber(ARGV[4])
local at = redis.call('ZSCORE', KEYS[2], ARGV[1])
if not at or tonumber(at) <= now - ttl * 1000 then return 0 end
redis.call('HSET', KEYS[1], ARGV[1], ARGV[2])
redis.call('ZADD', KEYS[2], now, ARGV[1])
redis.call('EXPIRE', KEYS[1], ttl)
redis.call('EXPIRE', KEYS[2], ttl)
return 1
`,
);

/** ARGV: digest, now (ms), TTL (s). The record if the session is live, else nil. */
const FIND = new LuaScript<string | null>(
  'mcpSessionFind',
  `
local at = redis.call('ZSCORE', KEYS[2], ARGV[1])
if not at or tonumber(at) <= tonumber(ARGV[2]) - tonumber(ARGV[3]) * 1000 then return false end
return redis.call('HGET', KEYS[1], ARGV[1])
`,
);

/** ARGV: digest. */
const REMOVE = new LuaScript<number>(
  'mcpSessionRemove',
  `
redis.call('HDEL', KEYS[1], ARGV[1])
return redis.call('ZREM', KEYS[2], ARGV[1])
`,
);

/** MCP sessions in Redis, per token (`mcp:sessions:{token}` and `mcp:session-times:{token}`), known to every replica. */
@Injectable()
export class RedisMcpSessionRecords implements McpSessionRecords {
  constructor(
    @Inject(REDIS) private readonly redis: Redis,
    private readonly keys: RedisKeys,
  ) {
    for (const script of [SAVE, REFRESH, FIND, REMOVE]) script.defineOn(redis);
  }

  available(): boolean {
    return redisReady(this.redis);
  }

  async save(
    tokenId: string,
    digest: string,
    record: string,
    at: { nowMs: number; ttlSeconds: number; maxPerToken: number },
  ): Promise<void> {
    await SAVE.run(this.redis, this.keysOf(tokenId), [
      digest,
      record,
      at.nowMs,
      at.ttlSeconds,
      at.maxPerToken,
    ]);
  }

  async refresh(
    tokenId: string,
    digest: string,
    record: string,
    at: { nowMs: number; ttlSeconds: number },
  ): Promise<void> {
    await REFRESH.run(this.redis, this.keysOf(tokenId), [digest, record, at.nowMs, at.ttlSeconds]);
  }

  async find(
    tokenId: string,
    digest: string,
    at: { nowMs: number; ttlSeconds: number },
  ): Promise<string | null> {
    return (await FIND.run(this.redis, this.keysOf(tokenId), [digest, at.nowMs, at.ttlSeconds])) ?? null;
  }

  async remove(tokenId: string, digest: string): Promise<void> {
    await REMOVE.run(this.redis, this.keysOf(tokenId), [digest]);
  }

  private keysOf(tokenId: string): string[] {
    return [this.keys.mcpSessions(tokenId), this.keys.mcpSessionTimes(tokenId)];
  }
}
