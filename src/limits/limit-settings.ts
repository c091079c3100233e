import 'reflect-metadata';
import { IsInt, IsOptional, Min } from 'class-validator';

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
}

export type Limits = Pick<LimitSettings, keyof LimitSettings>;
export const LIMIT_NAMES = ['concurrentRequests', 'requestsPerMinute', 'tokensPerMinute', 'tokensPerDay', 'tokensPerMonth'] as const;
export type LimitName = (typeof LIMIT_NAMES)[number];

/**
 * What each limit counts, in one table: `concurrency` is a set of leases on the requests in flight (released when
 * a request is accounted, expired if its replica dies); `requests` and `tokens` are counters in fixed UTC windows.
 */
export const LIMIT_KINDS: Record<LimitName, 'concurrency' | 'requests' | 'tokens'> = {
  concurrentRequests: 'concurrency',
  requestsPerMinute: 'requests',
  tokensPerMinute: 'tokens',
  tokensPerDay: 'tokens',
  tokensPerMonth: 'tokens',
};

/** Only the limits that are set, as a plain object (what Redis and the API store and show). */
export function cleanLimits(limits: Limits | undefined | null): Limits {
  const out: Limits = {};
  for (const name of LIMIT_NAMES) {
    const value = limits?.[name];
    if (typeof value === 'number') out[name] = value;
  }
  return out;
}
