import { Inject, Injectable } from '@nestjs/common';
import { GatewayException } from '../core/errors/gateway.exception';
import { TeamStore } from '../teams/team.store';
import { nanosToUnits, parseCounterField, recordView, USAGE_OUTCOMES } from './usage-record';
import { pageEnd } from '../redis/stream-page';
import { PriceBook } from '../billing/price-book';
import { USAGE_RECORDS, type UsageRecords } from './usage-records.repository';

export type UsageGroupBy = 'day' | 'model' | 'token' | 'endpoint';

export interface UsageQuery {
  /** One team, or every team when absent. */
  team?: string;
  /** Without `team`: only these teams instead of every team (what the caller may read). */
  within?: readonly string[];
  model?: string;
  /** Inclusive UTC days, yyyy-mm-dd. */
  from: string;
  to: string;
  groupBy: UsageGroupBy;
}

export interface UsageTotals {
  requests: number;
  requests_ok: number;
  requests_error: number;
  requests_aborted: number;
  requests_rejected: number;
  prompt_tokens: number;
  completion_tokens: number;
  reasoning_tokens: number;
  /** Prompt tokens read from the vendors' prompt caches (part of prompt_tokens). */
  cached_tokens: number;
  /** Prompt tokens written to the vendors' prompt caches (part of prompt_tokens, apart from cached_tokens). */
  cache_write_tokens: number;
  total_tokens: number;
  estimated_requests: number;
  /**
   * Spend in the billing currency's unit (exact to the nano-unit) of the requests whose price is known; null when
   * some requests counted here have no known price and none spent tokens at a known price, a zero price included
   * (unknown, never 0, like a record's cost).
   */
  cost: number | null;
  /** The same in nano-units (integer, exact), or null. */
  cost_nanos: number | null;
  /**
   * Requests whose model has no known price: their spend is not in `cost`. When some of the requests counted here
   * have a price and some do not, `cost` is the priced ones' sum (a lower bound) and this says how many are missing.
   */
  cost_unknown_requests: number;
}

export interface UsageRow extends UsageTotals {
  team: string;
  day?: string;
  model?: string;
  token_id?: string;
  endpoint?: string;
}

const MAX_DAYS = 400;

function emptyTotals(): UsageTotals {
  return {
    requests: 0,
    requests_ok: 0,
    requests_error: 0,
    requests_aborted: 0,
    requests_rejected: 0,
    prompt_tokens: 0,
    completion_tokens: 0,
    reasoning_tokens: 0,
    cached_tokens: 0,
    cache_write_tokens: 0,
    total_tokens: 0,
    estimated_requests: 0,
    cost: 0,
    cost_nanos: 0,
    cost_unknown_requests: 0,
  };
}

/** Reads the per-team, per-day counters and sums them the way a query groups them. */
@Injectable()
export class UsageQueryService {
  constructor(
    @Inject(USAGE_RECORDS) private readonly store: UsageRecords,
    private readonly teams: TeamStore,
    private readonly prices: PriceBook,
  ) {}

  /** The billing currency costs are in. */
  get currency(): string {
    return this.prices.currency;
  }

  async summary(query: UsageQuery): Promise<{ data: UsageRow[]; total: UsageTotals }> {
    const days = daysBetween(query.from, query.to);
    return fromRedis(this.sum(query, days));
  }

  private async sum(query: UsageQuery, days: string[]): Promise<{ data: UsageRow[]; total: UsageTotals }> {
    const teamIds = query.team
      ? [query.team]
      : query.within
        ? [...query.within]
        : (await this.teams.list()).map((team) => team.id);
    const results = (await this.store.dayCounters(teamIds, days)).flat();

    const rows = new Map<string, UsageRow>();
    const total = emptyTotals();
    // Sums holding a request that spent tokens at a known price (zero included): their cost is known.
    const priced = new Set<UsageTotals>();
    let i = 0;
    for (const team of teamIds) {
      for (const day of days) {
        const fields = results[i++];
        for (const [field, value] of Object.entries(fields)) {
          const counter = parseCounterField(field);
          if (!counter || (query.model && counter.model !== query.model)) continue;
          const group =
            query.groupBy === 'day'
              ? day
              : query.groupBy === 'model'
                ? counter.model
                : query.groupBy === 'endpoint'
                  ? counter.endpoint
                  : counter.tokenId;
          const key = `${team}\n${group}`;
          let row = rows.get(key);
          if (!row) {
            const label = {
              day: { day: group },
              model: { model: group },
              endpoint: { endpoint: group },
              token: { token_id: group },
            }[query.groupBy];
            row = { team, ...label, ...emptyTotals() };
            rows.set(key, row);
          }
          add(row, counter.metric, Number(value));
          add(total, counter.metric, Number(value));
          if (counter.metric === 'cost' || counter.metric === 'cost_known') priced.add(row).add(total);
        }
      }
    }
    // A sum with requests of unknown price and none that spent tokens at a known price has an unknown cost: null,
    // as on a record, never 0. Requests that spent nothing (refusals) cost 0 whatever the price, so they do not make
    // it known; a zero-priced model's answer does, and its sum stays 0 with the unpriced ones counted beside it.
    for (const row of [...rows.values(), total]) {
      if (row.cost_unknown_requests > 0 && !priced.has(row)) row.cost = row.cost_nanos = null;
    }
    const data = [...rows.values()].sort((a, b) =>
      a.team === b.team
        ? String(a.day ?? a.model ?? a.endpoint ?? a.token_id).localeCompare(
            String(b.day ?? b.model ?? b.endpoint ?? b.token_id),
          )
        : a.team.localeCompare(b.team),
    );
    return { data, total };
  }

  /** A team's newest usage records first; `before` is an entry id to page from. */
  async records(team: string, limit: number, before?: string): Promise<Array<Record<string, unknown>>> {
    const end = pageEnd(before || undefined);
    if (end === null) return [];
    const entries = await fromRedis(this.store.records(team, end, limit));
    return entries.map(([id, flat]) => recordView(id, flat));
  }
}

/**
 * A read of the counters or records that Redis could not answer (down, or slower than redis.commandTimeoutMs): 503
 * `store_unavailable` in the API's error shape, which clients retry, not a 500 that says the gateway is broken.
 */
async function fromRedis<T>(read: Promise<T>): Promise<T> {
  try {
    return await read;
  } catch (error) {
    if (error instanceof GatewayException) throw error;
    throw new GatewayException(
      'store_unavailable',
      'Usage cannot be read because Redis is unreachable; try again shortly.',
      {
        cause: error,
        headers: { 'retry-after': '1' },
      },
    );
  }
}

function add(totals: UsageTotals, metric: string, value: number): void {
  switch (metric) {
    case 'requests':
      totals.requests += value;
      return;
    case 'prompt':
      totals.prompt_tokens += value;
      totals.total_tokens += value;
      return;
    case 'completion':
      totals.completion_tokens += value;
      totals.total_tokens += value;
      return;
    case 'reasoning':
      totals.reasoning_tokens += value;
      return;
    case 'cache_read':
      totals.cached_tokens += value;
      return;
    case 'cache_write':
      totals.cache_write_tokens += value;
      return;
    case 'estimated':
      totals.estimated_requests += value;
      return;
    case 'cost':
      totals.cost_nanos = (totals.cost_nanos ?? 0) + value;
      totals.cost = nanosToUnits(totals.cost_nanos);
      return;
    case 'cost_unknown':
      totals.cost_unknown_requests += value;
      return;
    default:
      if ((USAGE_OUTCOMES as readonly string[]).includes(metric))
        totals[`requests_${metric}` as keyof UsageTotals] += value;
  }
}

/** Every UTC day from `from` to `to`, inclusive. */
function daysBetween(from: string, to: string): string[] {
  const start = Date.parse(`${from}T00:00:00Z`);
  const end = Date.parse(`${to}T00:00:00Z`);
  if (end < start)
    throw new GatewayException('invalid_request', '`from` must not be after `to`.', {
      param: 'from',
      wireCode: null,
    });
  const count = (end - start) / 86_400_000 + 1;
  if (count > MAX_DAYS) {
    throw new GatewayException('invalid_request', `At most ${MAX_DAYS} days per query.`, {
      param: 'from',
      wireCode: null,
    });
  }
  return Array.from({ length: count }, (_, i) => new Date(start + i * 86_400_000).toISOString().slice(0, 10));
}
