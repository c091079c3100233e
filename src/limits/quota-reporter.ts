import { Inject, Injectable, type OnModuleInit } from '@nestjs/common';
import type Redis from 'ioredis';
import { GatewayConfig } from '../config/config.schema';
import { MetricsService, type QuotaReading } from '../metrics/metrics.service';
import { REDIS, redisReady } from '../redis/redis.module';
import { RedisKeys } from '../redis/redis-keys';
import { TeamStore } from '../teams/team.store';
import { LIMIT_KINDS, LIMIT_NAMES, type LimitName } from '../core/limit-settings';
import { windowOf } from './limit-windows';
import { remainingUnits, usedRatio } from './budget-report';
import { batch } from '../redis/batch';

/**
 * Feeds `switchyard_quota_remaining{team, limit}`: at scrape time it reads every
 * team's limit counters from Redis (one pipeline), so every replica reports the same
 * truth. Readings are reused for `metrics.quotaCacheMs` so frequent scrapes stay cheap.
 */
@Injectable()
export class QuotaReporter implements OnModuleInit {
  private cached?: { at: number; readings: QuotaReading[] };

  constructor(
    @Inject(REDIS) private readonly redis: Redis,
    private readonly keys: RedisKeys,
    private readonly teams: TeamStore,
    private readonly metrics: MetricsService,
    private readonly config: GatewayConfig,
  ) {}

  onModuleInit(): void {
    this.metrics.setQuotaSource(() => this.read());
  }

  async read(): Promise<QuotaReading[]> {
    const now = Date.now();
    if (this.cached && now - this.cached.at < this.config.metrics.quotaCacheMs) return this.cached.readings;
    if (!redisReady(this.redis)) throw new Error(`redis is ${this.redis.status}`);
    const wanted: Array<{ team: string; limit: LimitName; max: number; key: string }> = [];
    for (const team of await this.teams.list()) {
      for (const name of LIMIT_NAMES) {
        const max = team.limits[name];
        if (max === undefined || LIMIT_KINDS[name] === 'concurrency') continue; // a quota gauge is for windowed counters
        wanted.push({
          team: team.id,
          limit: name,
          max,
          key: this.keys.limitCounter(team.id, 'team', name, windowOf(name, now).id),
        });
      }
    }
    const values = await batch(wanted.map(({ key }) => this.redis.get(key)));
    const readings = wanted.map(({ team, limit, max }, i): QuotaReading => {
      const used = Number(values[i]?.[1] ?? 0);
      // Budget counters hold nano-units; budgets are set in the currency's unit.
      if (LIMIT_KINDS[limit] === 'cost')
        return { team, limit, remaining: remainingUnits(max, used), usedRatio: usedRatio(used, max) };
      return { team, limit, remaining: Math.max(0, max - used) };
    });
    this.cached = { at: now, readings };
    return readings;
  }
}
