import { Inject, Injectable } from '@nestjs/common';
import type Redis from 'ioredis';
import { GatewayConfig } from '../config/config.schema';
import { REDIS } from '../redis/redis.module';
import { RedisKeys } from '../redis/redis-keys';
import { TeamStore } from '../teams/team.store';
import { nanosToUnits } from '../usage/usage-record';
import { LIMIT_KINDS, LIMIT_NAMES } from './limit-settings';
import { windowOf } from './limit-windows';

export interface BudgetUse {
  budget: string;
  /** In the billing currency's unit. */
  limit: number;
  spent: number;
  remaining: number;
  used_ratio: number;
  resets_at: string;
}

/**
 * A team's budgets and how full each is right now, read from the admission counters themselves (spend admitted,
 * settled to the real cost as requests end): what the admin API, the CLI and the console show.
 */
@Injectable()
export class BudgetReport {
  constructor(
    @Inject(REDIS) private readonly redis: Redis,
    private readonly keys: RedisKeys,
    private readonly teams: TeamStore,
    private readonly config: GatewayConfig,
  ) {}

  async of(teamId: string): Promise<{ object: 'budget'; team: string; currency: string; budgets: BudgetUse[] }> {
    const team = await this.teams.require(teamId);
    const now = Date.now();
    const budgets: BudgetUse[] = [];
    for (const name of LIMIT_NAMES) {
      const limit = team.limits[name];
      if (limit === undefined || LIMIT_KINDS[name] !== 'cost') continue;
      const window = windowOf(name, now);
      const nanos = Number((await this.redis.get(this.keys.limitCounter(team.id, 'team', name, window.id))) ?? 0);
      const spent = nanosToUnits(nanos);
      budgets.push({ budget: name, limit, spent, remaining: nanosToUnits(Math.max(0, Math.round(limit * 1e9) - nanos)), used_ratio: spent / limit, resets_at: new Date(window.resetAt).toISOString() });
    }
    return { object: 'budget', team: team.id, currency: this.config.billing.currency, budgets };
  }
}
