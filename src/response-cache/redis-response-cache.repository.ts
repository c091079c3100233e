import { Inject, Injectable } from '@nestjs/common';
import type Redis from 'ioredis';
import { REDIS, redisReady } from '../redis/redis.module';
import { RedisKeys } from '../redis/redis-keys';
import type { ResponseCacheEntries } from './response-cache.repository';

/**
 * Cached answers in Redis under the team's hash tag (`rcache:{team}:<sha256>`): one string per answer, with its
 * model's TTL. The key names the team, so another team's answer is simply not there.
 */
@Injectable()
export class RedisResponseCacheEntries implements ResponseCacheEntries {
  constructor(
    @Inject(REDIS) private readonly redis: Redis,
    private readonly keys: RedisKeys,
  ) {}

  available(): boolean {
    return redisReady(this.redis);
  }

  find(team: string, key: string): Promise<string | null> {
    return this.redis.get(this.keys.responseCache(team, key));
  }

  async save(team: string, key: string, entry: string, ttlSeconds: number): Promise<void> {
    await this.redis.set(this.keys.responseCache(team, key), entry, 'EX', ttlSeconds);
  }
}
