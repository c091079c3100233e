import { Inject, Injectable } from '@nestjs/common';
import type { Principal } from '../auth/principal';
import { GatewayConfig } from '../config/config.schema';
import { GatewayException } from '../core/errors/gateway.exception';
import { AppLogger } from '../common/logging/logger';
import { MetricsService } from '../metrics/metrics.service';
import {
  LIMIT_COUNTERS,
  type CounterId,
  type CounterTake,
  type LimitCounters,
} from './limit-counters.repository';
import { LIMIT_CATALOGUE, LIMIT_NAMES, type LimitName, type Limits } from '../core/limit-settings';
import { rulesOf, type Measure, type UnitRules } from './limit-units';
import { formatDuration, windowOf } from './limit-windows';

/** One limit an admission checks: `requestsPerMinute` of the team, `tokensPerDay` of a token, ... */
interface Check extends CounterTake {
  scope: 'team' | 'token';
  rules: UnitRules;
  /** Counters: when the window ends. Leases: 0 (a lease ends with its request). */
  resetAt: number;
}

/**
 * What a request reserved against the limits whose charge is an estimate (tokens, budgets), settled to the real
 * count and cost when it ends.
 */
export interface Reservation {
  teamId: string;
  /** The counters charged an estimate, and the limit each counts for (its unit says how to settle it). */
  counters: Array<{ counter: CounterId; limit: LimitName }>;
  reserved: Measure;
}

/** What an admitted request holds until it is accounted. */
export interface AdmissionHold {
  reservation?: Reservation;
  /** Concurrency lease sets the request's record id is in (released when it is accounted). */
  concurrencyKeys: CounterId[];
}

export interface Admission extends AdmissionHold {
  /** x-ratelimit-* headers for the response. */
  headers: Record<string, string>;
  /** True when the admission script also wrote the request's in-flight lease. */
  leaseWritten: boolean;
}

/** The request's in-flight lease, written by the admission when it admits the request (one command, not two). */
export interface LeaseToWrite {
  /** The team's in-flight leases, as the in-flight leases name them. */
  key: string;
  /** The lease as JSON, given whether the admission reserves tokens or cost. */
  value: (reserves: boolean, concurrencyKeys: CounterId[]) => string;
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
    @Inject(LIMIT_COUNTERS) private readonly counters: LimitCounters,
    private readonly config: GatewayConfig,
    private readonly metrics: MetricsService,
    private readonly logger: AppLogger,
  ) {}

  /** True when a limit of this principal reserves tokens (so callers can skip the estimate otherwise). */
  hasTokenLimits(principal: Principal): boolean {
    return hasLimitWhere(principal, (rules) => rules.needsTokenEstimate);
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
    const costNanos = hasLimitWhere(principal, (rules) => rules.needsCostEstimate) ? costEstimate() : 0;
    if (costNanos === undefined) {
      // A budget cannot hold over a model with no price; answering anyway would let spend through uncounted.
      const teamBudget = LIMIT_NAMES.some(
        (name) => rulesOf(name).needsCostEstimate && principal.teamLimits[name] !== undefined,
      );
      throw new GatewayException(
        'permission_denied',
        `This ${teamBudget ? `team ("${principal.teamId}")` : 'token'} has a spend budget and the model has no known price, so its spend cannot be bounded; an admin must set models.<name>.price.`,
        { param: 'model' },
      );
    }
    const reserved: Measure = { tokens, costNanos };
    const checks = [
      ...checksFor(principal, 'team', principal.teamLimits, reserved, now, false),
      ...checksFor(principal, 'token', principal.tokenLimits, reserved, now, false),
    ];
    if (checks.length === 0) return { headers: {}, concurrencyKeys: [], leaseWritten: false };
    const reserves = checks.some((check) => check.rules.settles);

    let answer;
    try {
      if (!this.counters.ready) throw new Error(`redis is ${this.counters.state}`);
      answer = await this.counters.admit({
        now,
        recordId,
        leaseMs,
        takes: checks,
        inflight: lease && { key: lease.key, value: (leaseSets) => lease.value(reserves, leaseSets) },
      });
    } catch (error) {
      return this.duringOutage(error);
    }
    const { refused, values, counters } = answer;
    const headers = rateLimitHeaders(checks, values, now);
    if (refused >= 0) throw this.refusal(principal, checks[refused], values[refused], now, headers);
    const settled = checks.flatMap((check, i) =>
      check.rules.settles ? [{ counter: counters[i], limit: check.limit }] : [],
    );
    return {
      headers,
      reservation: reserves ? { teamId: principal.teamId, counters: settled, reserved } : undefined,
      concurrencyKeys: counters.filter((_, i) => checks[i].rules.leases),
      leaseWritten: lease !== undefined,
    };
  }

  /**
   * Admits one MCP tool call, prompt get or resource read (docs/mcp.md#limits) against the limits they take from
   * (`toolCallsPerMinute`, team and token), with the same script as model requests, or throws the limit's 429 GatewayException. Redis down: as
   * `redis.onOutage` says, like a model request.
   */
  async admitToolCall(principal: Principal): Promise<void> {
    const now = Date.now();
    const none: Measure = { tokens: 0, costNanos: 0 };
    const checks = [
      ...checksFor(principal, 'team', principal.teamLimits, none, now, true),
      ...checksFor(principal, 'token', principal.tokenLimits, none, now, true),
    ];
    if (checks.length === 0) return;
    let answer;
    try {
      if (!this.counters.ready) throw new Error(`redis is ${this.counters.state}`);
      answer = await this.counters.admit({ now, recordId: '', leaseMs: 0, takes: checks });
    } catch (error) {
      this.duringOutage(error);
      return;
    }
    if (answer.refused >= 0)
      throw this.refusal(principal, checks[answer.refused], answer.values[answer.refused], now, {});
  }

  /**
   * The counters and deltas that turn a reservation into the real count and cost (for the usage script). A cost
   * that is unknown at the end (a fallback with no price answered) keeps what was reserved.
   */
  settlement(
    reservation: Reservation | undefined,
    actualTokens: number,
    actualCostNanos: number | null = null,
  ): { keys: CounterId[]; deltas: number[] } {
    if (!reservation) return { keys: [], deltas: [] };
    const { reserved } = reservation;
    const used: Measure = { tokens: actualTokens, costNanos: actualCostNanos ?? reserved.costNanos };
    return {
      keys: reservation.counters.map(({ counter }) => counter),
      deltas: reservation.counters.map(({ limit }) => {
        const rules = rulesOf(limit);
        return rules.charge(used) - rules.charge(reserved);
      }),
    };
  }

  private refusal(
    principal: Principal,
    check: Check,
    used: number,
    now: number,
    headers: Record<string, string>,
  ): GatewayException {
    this.metrics.limitRejections.inc({ team: principal.teamId, limit: check.limit });
    const resetIn = check.resetAt - now;
    const facts = {
      name: check.limit,
      who: check.scope === 'team' ? `team "${principal.teamId}"` : `token ${principal.tokenId}`,
      used,
      limit: check.max,
      cost: check.cost,
      when: `resets at ${new Date(check.resetAt).toISOString()} (in ${formatDuration(resetIn)})`,
      show: (nanos: number) =>
        check.rules.money
          ? `${(nanos / 1e9).toFixed(6).replace(/0{1,4}$/, '')} ${this.config.billing.currency}`
          : String(nanos),
    };
    const code = LIMIT_CATALOGUE[check.limit].refusal;
    // Waiting cannot help: this one request asks for more than the whole window allows.
    if (check.rules.tooLarge && check.cost > check.max)
      return new GatewayException(code, check.rules.tooLarge(facts), { headers });
    const { message, retryAfter } = check.rules.reached(facts);
    const seconds = retryAfter === 'window' ? Math.max(1, Math.ceil(resetIn / 1000)) : 1;
    return new GatewayException(code, message, {
      headers: { ...headers, 'retry-after': String(seconds) },
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

/** Whether a limit of the principal (its team's or its token's) has a unit that `matches`. */
function hasLimitWhere(principal: Principal, matches: (rules: UnitRules) => boolean): boolean {
  return LIMIT_NAMES.some(
    (name) =>
      matches(rulesOf(name)) &&
      (principal.teamLimits[name] !== undefined || principal.tokenLimits[name] !== undefined),
  );
}

/** The checks of one scope's limits (team or token), in catalogue order, each charged by its unit's rules. */
function checksFor(
  principal: Principal,
  scope: 'team' | 'token',
  limits: Limits,
  reserved: Measure,
  now: number,
  toolCalls: boolean,
): Check[] {
  const checks: Check[] = [];
  for (const name of LIMIT_NAMES) {
    const set = limits[name];
    if (set === undefined) continue;
    const rules = rulesOf(name);
    if (rules.toolCalls !== toolCalls) continue;
    const window = rules.leases ? undefined : windowOf(name, now);
    checks.push({
      teamId: principal.teamId,
      tokenId: scope === 'token' ? principal.tokenId : undefined,
      limit: name,
      scope,
      rules,
      window,
      max: rules.counterLimit(set),
      cost: rules.charge(reserved),
      resetAt: window?.resetAt ?? 0,
    });
  }
  return checks;
}

/**
 * OpenAI's x-ratelimit-* headers. With several limits reported by one header family (team and token, minute and
 * day), the headers describe the one with the least remaining.
 */
function rateLimitHeaders(checks: Check[], values: number[], now: number): Record<string, string> {
  const tightest = new Map<string, { check: Check; remaining: number }>();
  checks.forEach((check, i) => {
    const family = check.rules.header;
    if (family === undefined) return;
    const remaining = Math.max(0, check.max - values[i]);
    const before = tightest.get(family);
    if (!before || remaining < before.remaining) tightest.set(family, { check, remaining });
  });
  const headers: Record<string, string> = {};
  for (const family of ['requests', 'tokens'] as const) {
    const found = tightest.get(family);
    if (!found) continue;
    headers[`x-ratelimit-limit-${family}`] = String(found.check.max);
    headers[`x-ratelimit-remaining-${family}`] = String(found.remaining);
    headers[`x-ratelimit-reset-${family}`] = formatDuration(found.check.resetAt - now);
  }
  return headers;
}
