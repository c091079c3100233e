import { Inject, Injectable } from '@nestjs/common';
import type Redis from 'ioredis';
import { batch } from '../redis/batch';
import { LuaScript } from '../redis/lua-script';
import { REDIS, redisReady } from '../redis/redis.module';
import { RedisKeys } from '../redis/redis-keys';
import type {
  AdmitAnswer,
  AdmitCall,
  CounterRead,
  CounterTake,
  LimitCounters,
} from './limit-counters.repository';

/**
 * Limit admission. ARGV[1] now (ms), ARGV[2] the request's record id, ARGV[3] its in-flight lease (JSON, or ''
 * for none: then the last key is the team's in-flight hash, where an admitted request's lease is written under its
 * record id, saving the command that wrote it on its own, usage/inflight-leases.ts); then for each limit key a quadruple (kind,
 * limit, cost, ttl): kind `c` is a counter in a fixed window (INCRBY, expiring after ttl seconds); kind `z` is a
 * concurrency set of leases (ZSET record id -> lease end in ms; cost 1; ttl is the lease length in ms): expired
 * leases are dropped first, then the request takes a lease. Either every key can take its cost and all do, or
 * none does and the first failing index (1-based) is returned. Returns {failedIndex, v1, v2, ...}: each key's
 * value after the call (or its current value when refused), for the x-ratelimit-* headers.
 */
const ADMIT = new LuaScript<number[]>(
  'admitLimits',
  `
local now = tonumber(ARGV[1])
local lease = ARGV[3]
local n = #KEYS
if lease ~= '' then n = n - 1 end
local values = {}
local failed = 0
for i = 1, n do
  local at = 3 + (i - 1) * 4
  local limit = tonumber(ARGV[at + 2])
  local cost = tonumber(ARGV[at + 3])
  local current
  if ARGV[at + 1] == 'z' then
    redis.call('ZREMRANGEBYSCORE', KEYS[i], '-inf', now)
    current = redis.call('ZCARD', KEYS[i])
  else
    current = tonumber(redis.call('GET', KEYS[i]) or '0')
  end
  values[i] = current
  if failed == 0 and current + cost > limit then failed = i end
end
if failed == 0 then
  for i = 1, n do
    local at = 3 + (i - 1) * 4
    local cost = tonumber(ARGV[at + 3])
    local ttl = tonumber(ARGV[at + 4])
    if ARGV[at + 1] == 'z' then
      redis.call('ZADD', KEYS[i], now + ttl, ARGV[2])
      redis.call('PEXPIRE', KEYS[i], ttl * 2)
      values[i] = values[i] + 1
    else
      values[i] = redis.call('INCRBY', KEYS[i], cost)
      if redis.call('TTL', KEYS[i]) < 0 then redis.call('EXPIRE', KEYS[i], ttl) end
    end
  end
  if lease ~= '' then redis.call('HSET', KEYS[n + 1], ARGV[2], lease) end
end
table.insert(values, 1, failed)
return values
`,
);

/**
 * The limit counters in Redis: a counter per limit, scope (`team` or `tok:<id>`) and window (`rl:{team}:...`),
 * and a lease set per scope (`conc:{team}:...`), all under the team's hash tag, so one admission is one script on
 * one Cluster slot.
 */
@Injectable()
export class RedisLimitCounters implements LimitCounters {
  constructor(
    @Inject(REDIS) private readonly redis: Redis,
    private readonly keys: RedisKeys,
  ) {
    ADMIT.defineOn(redis);
  }

  get ready(): boolean {
    return redisReady(this.redis);
  }

  get state(): string {
    return this.redis.status;
  }

  async admit({ now, recordId, leaseMs, takes, inflight }: AdmitCall): Promise<AdmitAnswer> {
    const counters = takes.map((take) => this.keyOf(take));
    const leaseSets = counters.filter((_, i) => takes[i].window === undefined);
    const keys = inflight ? [...counters, inflight.key] : counters;
    const args: Array<string | number> = [now, recordId, inflight ? inflight.value(leaseSets) : ''];
    for (const take of takes) {
      if (take.window === undefined) args.push('z', take.max, 1, leaseMs);
      // A counter expires a minute after its window ends.
      else args.push('c', take.max, take.cost, Math.ceil((take.window.resetAt - now) / 1000) + 60);
    }
    const [failed, ...values] = (await ADMIT.run(this.redis, keys, args)).map(Number);
    return { refused: failed - 1, values, counters };
  }

  async read(counter: CounterRead): Promise<number> {
    return Number((await this.redis.get(this.counterKey(counter))) ?? 0);
  }

  async readMany(counters: CounterRead[]): Promise<number[]> {
    const values = await batch(counters.map((counter) => this.redis.get(this.counterKey(counter))));
    return values.map(([, value]) => Number(value ?? 0));
  }

  private keyOf(take: CounterTake): string {
    const scope = take.tokenId === undefined ? 'team' : `tok:${take.tokenId}`;
    if (take.window === undefined) return this.keys.concurrency(take.teamId, scope);
    return this.keys.limitCounter(take.teamId, scope, take.limit, take.window.id);
  }

  private counterKey({ teamId, limit, window }: CounterRead): string {
    return this.keys.limitCounter(teamId, 'team', limit, window.id);
  }
}
