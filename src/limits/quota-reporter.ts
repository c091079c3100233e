import { Inject, Injectable, type OnModuleInit } from '@nestjs/common';
import { GatewayConfig } from '../config/config.schema';
import { MetricsService, type QuotaReading } from '../metrics/metrics.service';
import { TeamStore } from '../teams/team.store';
import { LIMIT_COUNTERS, type CounterRead, type LimitCounters } from './limit-counters.repository';
import { LIMIT_NAMES } from '../core/limit-settings';
import { rulesOf } from './limit-units';
import { windowOf } from './limit-windows';
import { remainingUnits, usedRatio } from './budget-report';

/**
 * Feeds `switchyard_quota_remaining{team, limit}`: at scrape time it reads every
 * team's limit counters (one round trip), so every replica reports the same
 * truth. Readings are reused for `metrics.quotaCacheMs` so frequent scrapes stay cheap.
 */
@Injectable()
export class QuotaReporter implements OnModuleInit {
  private cached?: { at: number; readings: QuotaReading[] };

  constructor(
    @Inject(LIMIT_COUNTERS) private readonly counters: LimitCounters,
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
    if (!this.counters.ready) throw new Error(`redis is ${this.counters.state}`);
    const wanted: Array<CounterRead & { max: number }> = [];
    for (const team of await this.teams.list()) {
      for (const name of LIMIT_NAMES) {
        const max = team.limits[name];
        if (max === undefined || rulesOf(name).leases) continue; // a quota gauge is for windowed counters
        wanted.push({ teamId: team.id, limit: name, max, window: windowOf(name, now) });
      }
    }
    const values = await this.counters.readMany(wanted);
    const readings = wanted.map(({ teamId: team, limit, max }, i): QuotaReading => {
      const used = values[i];
      // Budget counters hold nano-units; budgets are set in the currency's unit.
      if (rulesOf(limit).money)
        return { team, limit, remaining: remainingUnits(max, used), usedRatio: usedRatio(used, max) };
      return { team, limit, remaining: Math.max(0, max - used) };
    });
    this.cached = { at: now, readings };
    return readings;
  }
}
