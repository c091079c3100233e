import { Inject, Injectable } from '@nestjs/common';
import type Redis from 'ioredis';
import { REDIS, redisReady } from '../redis/redis.module';
import { RedisKeys } from '../redis/redis-keys';
import type { McpSessionRecords } from './mcp-session-records.repository';

/** MCP sessions in Redis (`mcp:session:<digest>`, with a TTL), so every replica knows each one. */
@Injectable()
export class RedisMcpSessionRecords implements McpSessionRecords {
  constructor(
    @Inject(REDIS) private readonly redis: Redis,
    private readonly keys: RedisKeys,
  ) {}

  available(): boolean {
    return redisReady(this.redis);
  }

  async save(digest: string, record: string, ttlSeconds: number): Promise<void> {
    await this.redis.set(this.keys.mcpSession(digest), record, 'EX', ttlSeconds);
  }

  async refresh(digest: string, record: string, ttlSeconds: number): Promise<void> {
    await this.redis.set(this.keys.mcpSession(digest), record, 'EX', ttlSeconds, 'XX');
  }

  find(digest: string): Promise<string | null> {
    return this.redis.get(this.keys.mcpSession(digest));
  }

  async remove(digest: string): Promise<void> {
    await this.redis.del(this.keys.mcpSession(digest));
  }
}
