import 'reflect-metadata';
import { IsInt, IsNumber, IsOptional, Min } from 'class-validator';

/**
 * The limits a team (and, narrower, a token) can have. Used by the config file
 * and by the admin API bodies, so both accept exactly the same shape.
 * Windows are fixed UTC windows: the current minute, day (00:00 UTC) and month.
 */
export class LimitSettings {
  /** Requests in flight at once (streams included): one team cannot take all of a backend's connections. */
  @IsOptional() @IsInt() @Min(1) concurrentRequests?: number;
  @IsOptional() @IsInt() @Min(1) requestsPerMinute?: number;
  @IsOptional() @IsInt() @Min(1) tokensPerMinute?: number;
  @IsOptional() @IsInt() @Min(1) tokensPerDay?: number;
  @IsOptional() @IsInt() @Min(1) tokensPerMonth?: number;
  /** Spend per UTC day, in billing.currency (micro-unit precision). */
  @IsOptional() @IsNumber({ maxDecimalPlaces: 6, allowNaN: false, allowInfinity: false }) @Min(0.000001) budgetPerDay?: number;
  /** Spend per UTC month, in billing.currency. */
  @IsOptional() @IsNumber({ maxDecimalPlaces: 6, allowNaN: false, allowInfinity: false }) @Min(0.000001) budgetPerMonth?: number;
}

export type Limits = Pick<LimitSettings, keyof LimitSettings>;
export const LIMIT_NAMES = ['concurrentRequests', 'requestsPerMinute', 'tokensPerMinute', 'tokensPerDay', 'tokensPerMonth', 'budgetPerDay', 'budgetPerMonth'] as const;
export type LimitName = (typeof LIMIT_NAMES)[number];

/**
 * Every limit in one table: what it counts (`concurrency`: leases on the requests in flight, released when a
 * request is accounted and expired if its replica dies; `requests`, `tokens` and `cost` (nano-units of the billing
 * currency): counters), the fixed UTC window
 * a counter counts in, the code of a refusal, and its CLI flag. The limits service, the window function and the
 * CLI derive from it, so a new limit is a row here (and its field above), nothing else.
 */
export type LimitUnit = 'concurrency' | 'requests' | 'tokens' | 'cost';

export const LIMIT_CATALOGUE: Record<LimitName, { unit: LimitUnit; window?: 'minute' | 'day' | 'month'; refusal: 'rate_limit_exceeded' | 'quota_exceeded' | 'budget_exceeded'; flag: string }> = {
  concurrentRequests: { unit: 'concurrency', refusal: 'rate_limit_exceeded', flag: '--concurrency' },
  requestsPerMinute: { unit: 'requests', window: 'minute', refusal: 'rate_limit_exceeded', flag: '--rpm' },
  tokensPerMinute: { unit: 'tokens', window: 'minute', refusal: 'rate_limit_exceeded', flag: '--tpm' },
  tokensPerDay: { unit: 'tokens', window: 'day', refusal: 'quota_exceeded', flag: '--tpd' },
  tokensPerMonth: { unit: 'tokens', window: 'month', refusal: 'quota_exceeded', flag: '--tokens-per-month' },
  budgetPerDay: { unit: 'cost', window: 'day', refusal: 'budget_exceeded', flag: '--budget-per-day' },
  budgetPerMonth: { unit: 'cost', window: 'month', refusal: 'budget_exceeded', flag: '--budget-per-month' },
};

/** What each limit counts (the catalogue's `unit`). */
export const LIMIT_KINDS = Object.fromEntries(LIMIT_NAMES.map((name) => [name, LIMIT_CATALOGUE[name].unit])) as Record<LimitName, LimitUnit>;

/** Only the limits that are set, as a plain object (what Redis and the API store and show). */
export function cleanLimits(limits: Limits | undefined | null): Limits {
  const out: Limits = {};
  for (const name of LIMIT_NAMES) {
    const value = limits?.[name];
    if (typeof value === 'number') out[name] = value;
  }
  return out;
}
