import { Inject, Injectable } from '@nestjs/common';
import type Redis from 'ioredis';
import { REDIS } from '../redis/redis.module';
import { RedisKeys } from '../redis/redis-keys';
import type { ConsoleSessionRecords } from './console-session-records.repository';

/** Console sessions in Redis (`console:session:<digest>`, with a TTL), so every replica knows each one. */
@Injectable()
export class RedisConsoleSessionRecords implements ConsoleSessionRecords {
  constructor(
    @Inject(REDIS) private readonly redis: Redis,
    private readonly keys: RedisKeys,
  ) {}

  async save(digest: string, session: string, ttlSeconds: number): Promise<void> {
    await this.redis.set(this.keys.consoleSession(digest), session, 'EX', ttlSeconds);
  }

  find(digest: string): Promise<string | null> {
    return this.redis.get(this.keys.consoleSession(digest));
  }

  async remove(digest: string): Promise<void> {
    await this.redis.del(this.keys.consoleSession(digest));
  }
}
