import { Inject, Injectable } from '@nestjs/common';
import { GatewayConfig } from '../config/config.schema';
import { TeamStore } from '../teams/team.store';
import { nanosToUnits } from '../usage/usage-record';
import { LIMIT_COUNTERS, type LimitCounters } from './limit-counters.repository';
import { LIMIT_NAMES } from '../core/limit-settings';
import { rulesOf } from './limit-units';
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

/** Digits a budget's used ratio is shown with: 0.01 % of the budget, finer than any alert threshold. */
export const USED_RATIO_DECIMALS = 4;
const RATIO_SCALE = 10n ** BigInt(USED_RATIO_DECIMALS);

/**
 * The fraction of a budget spent (`limit` in the currency's unit), from the integer counter, rounded down to
 * USED_RATIO_DECIMALS: 0.089 of 0.1 is 0.89, not 0.8899999999999999, and a ratio is never rounded up to a
 * threshold it has not reached (0.79996 shows 0.7999, so an alert at 0.8 does not fire early). Integer
 * arithmetic, so the rounding is exact for any budget.
 */
export function usedRatio(spentNanos: number, limit: number): number {
  const limitNanos = BigInt(Math.round(limit * 1e9));
  return (
    Number((BigInt(Math.max(0, Math.round(spentNanos))) * RATIO_SCALE) / limitNanos) / Number(RATIO_SCALE)
  );
}

/** What is left of a budget (`limit` in the currency's unit), exact to the nano-unit. */
export function remainingUnits(limit: number, spentNanos: number): number {
  return nanosToUnits(Math.max(0, Math.round(limit * 1e9) - spentNanos));
}

/**
 * A team's budgets and how full each is right now, read from the admission counters themselves (spend admitted,
 * settled to the real cost as requests end): what the admin API, the CLI and the console show.
 */
@Injectable()
export class BudgetReport {
  constructor(
    @Inject(LIMIT_COUNTERS) private readonly counters: LimitCounters,
    private readonly teams: TeamStore,
    private readonly config: GatewayConfig,
  ) {}

  async of(
    teamId: string,
  ): Promise<{ object: 'budget'; team: string; currency: string; budgets: BudgetUse[] }> {
    const team = await this.teams.require(teamId);
    const now = Date.now();
    const budgets: BudgetUse[] = [];
    for (const name of LIMIT_NAMES) {
      const limit = team.limits[name];
      if (limit === undefined || !rulesOf(name).money) continue;
      const window = windowOf(name, now);
      const nanos = await this.counters.read({ teamId: team.id, limit: name, window });
      budgets.push({
        budget: name,
        limit,
        spent: nanosToUnits(nanos),
        remaining: remainingUnits(limit, nanos),
        used_ratio: usedRatio(nanos, limit),
        resets_at: new Date(window.resetAt).toISOString(),
      });
    }
    return { object: 'budget', team: team.id, currency: this.config.billing.currency, budgets };
  }
}
