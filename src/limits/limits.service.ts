import { Inject, Injectable } from '@nestjs/common';
import type Redis from 'ioredis';
import type { Principal } from '../auth/principal';
import { GatewayConfig } from '../config/config.schema';
import { GatewayException } from '../core/errors/gateway.exception';
import { AppLogger } from '../common/logging/logger';
import { MetricsService } from '../metrics/metrics.service';
import { REDIS, redisReady } from '../redis/redis.module';
import { RedisKeys } from '../redis/redis-keys';
import {
  LIMIT_CATALOGUE,
  LIMIT_KINDS,
  LIMIT_NAMES,
  type LimitName,
  type LimitUnit,
  type Limits,
} from '../core/limit-settings';
import { formatDuration, windowOf } from './limit-windows';

/** One counter an admission checks: `requestsPerMinute` of the team, `tokensPerDay` of a token, ... */
interface Check {
  name: LimitName;
  scope: 'team' | 'token';
  key: string;
  limit: number;
  cost: number;
  /** Counters: when the window ends. Concurrency: 0 (a lease ends with its request). */
  resetAt: number;
}

/** What a request reserved against token limits and budgets, settled to the real count and cost when it ends. */
export interface Reservation {
  teamId: string;
  keys: string[];
  reserved: number;
  /** Budget counters (nano-units) and the worst-case cost reserved on them. */
  costKeys: string[];
  costReserved: number;
}

/** What an admitted request holds until it is accounted. */
export interface AdmissionHold {
  reservation?: Reservation;
  /** Concurrency lease sets the request's record id is in (released when it is accounted). */
  concurrencyKeys: string[];
}

export interface Admission extends AdmissionHold {
  /** x-ratelimit-* headers for the response. */
  headers: Record<string, string>;
  /** True when the admission script also wrote the request's in-flight lease. */
  leaseWritten: boolean;
}

/** The request's in-flight lease, written by the admission script when it admits it (one command, not two). */
export interface LeaseToWrite {
  /** The team's in-flight hash. */
  key: string;
  /** The lease as JSON, given whether the admission reserves tokens or cost. */
  value: (reserves: boolean, concurrencyKeys: string[]) => string;
}

/**
 * Quotas and rate limits, enforced across replicas by one Lua call per request.
 * Token limits reserve an estimate (prompt + max_tokens, or the configured default)
 * at admission; usage accounting settles each reservation to the real count, in the
 * same Redis script that writes the usage record.
 */
@Injectable()
export class LimitsService {
  private lastOutageLog = 0;

  constructor(
    @Inject(REDIS) private readonly redis: Redis,
    private readonly keys: RedisKeys,
    private readonly config: GatewayConfig,
    private readonly metrics: MetricsService,
    private readonly logger: AppLogger,
  ) {}

  /** True when this principal has any limit at all (so callers can skip the estimate). */
  hasTokenLimits(principal: Principal): boolean {
    return hasLimitOf(principal.teamLimits, 'tokens') || hasLimitOf(principal.tokenLimits, 'tokens');
  }

  /**
   * Admits the request or throws 429. `estimate` is the token reservation; it is only called when a token limit
   * applies. `costEstimate` is the worst-case cost in nano-units (undefined: the model has no price); it is only
   * called when a budget applies. `recordId` (the request's usage record id) names its concurrency lease, which
   * lasts `leaseMs` unless renewed (usage/inflight-leases.ts).
   */
  async admit(
    principal: Principal,
    estimate: () => number,
    recordId: string,
    leaseMs: number,
    costEstimate: () => number | undefined = () => undefined,
    lease?: LeaseToWrite,
  ): Promise<Admission> {
    const now = Date.now();
    const tokens = this.hasTokenLimits(principal) ? estimate() : 0;
    const budgeted = hasLimitOf(principal.teamLimits, 'cost') || hasLimitOf(principal.tokenLimits, 'cost');
    const cost = budgeted ? costEstimate() : 0;
    if (cost === undefined) {
      // A budget cannot hold over a model with no price; answering anyway would let spend through uncounted.
      throw new GatewayException(
        'permission_denied',
        `This ${hasLimitOf(principal.teamLimits, 'cost') ? `team ("${principal.teamId}")` : 'token'} has a spend budget and the model has no known price, so its spend cannot be bounded; an admin must set models.<name>.price.`,
        { param: 'model' },
      );
    }
    const checks = [
      ...this.checksFor(principal, 'team', principal.teamLimits, tokens, cost, now),
      ...this.checksFor(principal, 'token', principal.tokenLimits, tokens, cost, now),
    ];
    if (checks.length === 0) return { headers: {}, concurrencyKeys: [], leaseWritten: false };
    const keysOf = (kind: string) =>
      checks.filter((check) => LIMIT_KINDS[check.name] === kind).map((check) => check.key);
    const tokenKeys = keysOf('tokens');
    const costKeys = keysOf('cost');
    const concurrencyKeys = keysOf('concurrency');

    let result: number[];
    try {
      if (!redisReady(this.redis)) throw new Error(`redis is ${this.redis.status}`);
      const leaseValue = lease
        ? lease.value(tokenKeys.length > 0 || costKeys.length > 0, concurrencyKeys)
        : '';
      const keys = checks.map((check) => check.key);
      if (lease) keys.push(lease.key);
      const args: (string | number)[] = [...keys, now, recordId, leaseValue];
      for (const check of checks) {
        if (LIMIT_KINDS[check.name] === 'concurrency') args.push('z', check.limit, 1, leaseMs);
        else args.push('c', check.limit, check.cost, Math.ceil((check.resetAt - now) / 1000) + 60);
      }
      result = await this.redis.admitLimits(keys.length, ...args);
    } catch (error) {
      return this.duringOutage(error);
    }
    const [failed, ...values] = result.map(Number);
    const headers = rateLimitHeaders(checks, values, now);
    if (failed > 0) throw this.refusal(principal, checks[failed - 1], values[failed - 1], now, headers);
    return {
      headers,
      reservation:
        tokenKeys.length || costKeys.length
          ? { teamId: principal.teamId, keys: tokenKeys, reserved: tokens, costKeys, costReserved: cost }
          : undefined,
      concurrencyKeys,
      leaseWritten: lease !== undefined,
    };
  }

  /**
   * The keys and deltas that turn a reservation into the real count and cost (for the usage script). A cost that
   * is unknown at the end (a fallback with no price answered) keeps what was reserved.
   */
  settlement(
    reservation: Reservation | undefined,
    actualTokens: number,
    actualCostNanos: number | null = null,
  ): { keys: string[]; deltas: number[] } {
    if (!reservation) return { keys: [], deltas: [] };
    const tokenDelta = actualTokens - reservation.reserved;
    const costDelta = (actualCostNanos ?? reservation.costReserved) - reservation.costReserved;
    return {
      keys: [...reservation.keys, ...reservation.costKeys],
      deltas: [...reservation.keys.map(() => tokenDelta), ...reservation.costKeys.map(() => costDelta)],
    };
  }

  private checksFor(
    principal: Principal,
    scope: 'team' | 'token',
    limits: Limits,
    tokens: number,
    cost: number,
    now: number,
  ): Check[] {
    const checks: Check[] = [];
    for (const name of LIMIT_NAMES) {
      const limit = limits[name];
      if (limit === undefined) continue;
      const scopeKey = scope === 'team' ? 'team' : `tok:${principal.tokenId}`;
      if (LIMIT_KINDS[name] === 'concurrency') {
        checks.push({
          name,
          scope,
          key: this.keys.concurrency(principal.teamId, scopeKey),
          limit,
          cost: 1,
          resetAt: 0,
        });
        continue;
      }
      const window = windowOf(name, now);
      const rules = COUNTER_RULES[LIMIT_KINDS[name]];
      checks.push({
        name,
        scope,
        key: this.keys.limitCounter(principal.teamId, scopeKey, name, window.id),
        limit: rules.limit(limit),
        cost: rules.charge(tokens, cost),
        resetAt: window.resetAt,
      });
    }
    return checks;
  }

  private refusal(
    principal: Principal,
    check: Check,
    used: number,
    now: number,
    headers: Record<string, string>,
  ): GatewayException {
    this.metrics.limitRejections.inc({ team: principal.teamId, limit: check.name });
    const who = check.scope === 'team' ? `team "${principal.teamId}"` : `token ${principal.tokenId}`;
    if (LIMIT_KINDS[check.name] === 'concurrency') {
      return new GatewayException(
        'rate_limit_exceeded',
        `concurrentRequests limit of ${who} reached (${used}/${check.limit} requests in flight); retry when one ends.`,
        {
          headers: { ...headers, 'retry-after': '1' },
        },
      );
    }
    const resetIn = check.resetAt - now;
    const when = `resets at ${new Date(check.resetAt).toISOString()} (in ${formatDuration(resetIn)})`;
    const code = LIMIT_CATALOGUE[check.name].refusal;
    if (check.cost > check.limit && LIMIT_KINDS[check.name] !== 'cost') {
      // Waiting cannot help: this one request asks for more than the whole window allows.
      return new GatewayException(
        code,
        `This request reserves ${check.cost} tokens, more than the ${check.name} limit of ${who} (${check.limit}) allows; lower max_tokens.`,
        {
          headers,
        },
      );
    }
    if (LIMIT_KINDS[check.name] === 'cost') {
      const money = (nanos: number) =>
        `${(nanos / 1e9).toFixed(6).replace(/0{1,4}$/, '')} ${this.config.billing.currency}`;
      if (check.cost > check.limit) {
        return new GatewayException(
          code,
          `This request may cost up to ${money(check.cost)}, more than the ${check.name} of ${who} (${money(check.limit)}); lower max_tokens.`,
          { headers },
        );
      }
      return new GatewayException(
        code,
        `${check.name} of ${who} reached (${money(used)} of ${money(check.limit)} spent, this request may cost up to ${money(check.cost)}); it ${when}.`,
        {
          headers: { ...headers, 'retry-after': String(Math.max(1, Math.ceil(resetIn / 1000))) },
        },
      );
    }
    const what =
      LIMIT_KINDS[check.name] === 'requests'
        ? `${used}/${check.limit} requests used`
        : `${used}/${check.limit} tokens used, this request reserves ${check.cost}`;
    return new GatewayException(code, `${check.name} limit of ${who} reached (${what}); it ${when}.`, {
      headers: { ...headers, 'retry-after': String(Math.max(1, Math.ceil(resetIn / 1000))) },
    });
  }

  private duringOutage(error: unknown): Admission {
    if (this.config.redis.onOutage === 'fail-closed') {
      throw new GatewayException(
        'limits_unavailable',
        'Limits cannot be checked because Redis is unreachable; try again shortly.',
        {
          cause: error,
        },
      );
    }
    this.metrics.limitsUnchecked.inc();
    if (Date.now() - this.lastOutageLog > 10_000) {
      this.lastOutageLog = Date.now();
      this.logger.pino.warn(
        { err: error },
        'redis unreachable: admitting requests without limit checks (redis.onOutage: fail-open)',
      );
    }
    return { headers: {}, concurrencyKeys: [], leaseWritten: false };
  }
}

/** Whether any of these limits counts `unit` (from the catalogue: a new limit of that unit is seen here too). */
function hasLimitOf(limits: Limits, unit: LimitUnit): boolean {
  return LIMIT_NAMES.some((name) => LIMIT_KINDS[name] === unit && limits[name] !== undefined);
}

/**
 * How a counter of each unit is set and charged: budgets count nano-units (integers in Redis) while the limit is
 * set in the currency's unit; a request counts 1 against requests, its reservation against tokens and cost.
 */
const COUNTER_RULES: Record<
  Exclude<LimitUnit, 'concurrency'>,
  { limit(set: number): number; charge(tokens: number, cost: number): number }
> = {
  requests: { limit: (set) => set, charge: () => 1 },
  tokens: { limit: (set) => set, charge: (tokens) => tokens },
  cost: { limit: (set) => Math.round(set * 1e9), charge: (_tokens, cost) => cost },
};

/**
 * OpenAI's x-ratelimit-* headers. With several limits of one kind (team and token,
 * minute and day), the headers describe the one with the least remaining.
 */
function rateLimitHeaders(checks: Check[], values: number[], now: number): Record<string, string> {
  const headers: Record<string, string> = {};
  for (const kind of ['requests', 'tokens'] as const) {
    let tightest: { check: Check; remaining: number } | undefined;
    checks.forEach((check, i) => {
      if (LIMIT_KINDS[check.name] !== kind) return;
      const remaining = Math.max(0, check.limit - values[i]);
      if (!tightest || remaining < tightest.remaining) tightest = { check, remaining };
    });
    if (!tightest) continue;
    headers[`x-ratelimit-limit-${kind}`] = String(tightest.check.limit);
    headers[`x-ratelimit-remaining-${kind}`] = String(tightest.remaining);
    headers[`x-ratelimit-reset-${kind}`] = formatDuration(tightest.check.resetAt - now);
  }
  return headers;
}
