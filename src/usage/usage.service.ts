import { Inject, Injectable } from '@nestjs/common';
import type Redis from 'ioredis';
import { AppLogger } from '../common/logging/logger';
import { REDIS } from '../redis/redis.module';
import { RedisKeys } from '../redis/redis-keys';

export interface UsageEntry {
  teamId: string;
  tokenId: string;
  model: string;
  promptTokens: number;
  completionTokens: number;
  /** ok | error | aborted */
  outcome: 'ok' | 'error' | 'aborted';
}

/**
 * Usage accounting's single owner. For now: per-team, per-UTC-day counters
 * (requests, tokens, and per-model tokens) in one pipelined round trip, written
 * after the response so the client never waits on it. The usage issue grows this
 * into records, reservations and an outage buffer.
 */
@Injectable()
export class UsageService {
  constructor(
    @Inject(REDIS) private readonly redis: Redis,
    private readonly keys: RedisKeys,
    private readonly logger: AppLogger,
  ) {}

  record(entry: UsageEntry): void {
    const key = this.keys.usageDay(entry.teamId, new Date().toISOString().slice(0, 10));
    this.redis
      .pipeline()
      .hincrby(key, 'requests', 1)
      .hincrby(key, `requests:${entry.outcome}`, 1)
      .hincrby(key, 'prompt_tokens', entry.promptTokens)
      .hincrby(key, 'completion_tokens', entry.completionTokens)
      .hincrby(key, `model:${entry.model}:prompt_tokens`, entry.promptTokens)
      .hincrby(key, `model:${entry.model}:completion_tokens`, entry.completionTokens)
      .expire(key, 400 * 86_400)
      .exec()
      .catch((error: unknown) => this.logger.pino.error({ err: error, team: entry.teamId }, 'usage write failed'));
  }

  /** The counters of one team on one UTC day (yyyy-mm-dd). */
  async day(teamId: string, day: string): Promise<Record<string, number>> {
    const fields = await this.redis.hgetall(this.keys.usageDay(teamId, day));
    return Object.fromEntries(Object.entries(fields).map(([name, value]) => [name, Number(value)]));
  }
}
