import 'reflect-metadata';
import { IsInt, IsNumber, IsOptional, Max, Min } from 'class-validator';
import { LIMIT_NAMES, MAX_BUDGET, MAX_COUNT_LIMIT } from './limit-catalogue';

/**
 * The limits a team (and, narrower, a token) can have. Used by the config file
 * and by the admin API bodies, so both accept exactly the same shape.
 * Windows are fixed UTC windows: the current minute, day (00:00 UTC) and month.
 */
export class LimitSettings {
  /** Requests in flight at once (streams included): one team cannot take all of a backend's connections. */
  @IsOptional() @IsInt() @Min(1) @Max(MAX_COUNT_LIMIT) concurrentRequests?: number;
  @IsOptional() @IsInt() @Min(1) @Max(MAX_COUNT_LIMIT) requestsPerMinute?: number;
  @IsOptional() @IsInt() @Min(1) @Max(MAX_COUNT_LIMIT) tokensPerMinute?: number;
  @IsOptional() @IsInt() @Min(1) @Max(MAX_COUNT_LIMIT) tokensPerDay?: number;
  @IsOptional() @IsInt() @Min(1) @Max(MAX_COUNT_LIMIT) tokensPerMonth?: number;
  /** Spend per UTC day, in billing.currency (micro-unit precision). */
  @IsOptional()
  @IsNumber({ maxDecimalPlaces: 6, allowNaN: false, allowInfinity: false })
  @Min(0.000001)
  @Max(MAX_BUDGET)
  budgetPerDay?: number;
  /** Spend per UTC month, in billing.currency. */
  @IsOptional()
  @IsNumber({ maxDecimalPlaces: 6, allowNaN: false, allowInfinity: false })
  @Min(0.000001)
  @Max(MAX_BUDGET)
  budgetPerMonth?: number;
}

export type Limits = Pick<LimitSettings, keyof LimitSettings>;
// The catalogue of limits lives in a file of its own, free of decorators, so the console's page can import it too.
export {
  LIMIT_CATALOGUE,
  LIMIT_KINDS,
  LIMIT_NAMES,
  MAX_BUDGET,
  MAX_COUNT_LIMIT,
  type LimitName,
  type LimitUnit,
} from './limit-catalogue';

/** Only the limits that are set, as a plain object (what Redis and the API store and show). */
export function cleanLimits(limits: Limits | undefined | null): Limits {
  const out: Limits = {};
  for (const name of LIMIT_NAMES) {
    const value = limits?.[name];
    if (typeof value === 'number') out[name] = value;
  }
  return out;
}
