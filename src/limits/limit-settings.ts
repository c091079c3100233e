import 'reflect-metadata';
import { IsInt, IsOptional, Min } from 'class-validator';

/**
 * The four limits a team (and, narrower, a token) can have. Used by the config file
 * and by the admin API bodies, so both accept exactly the same shape.
 * Windows are fixed UTC windows: the current minute, day (00:00 UTC) and month.
 */
export class LimitSettings {
  @IsOptional() @IsInt() @Min(1) requestsPerMinute?: number;
  @IsOptional() @IsInt() @Min(1) tokensPerMinute?: number;
  @IsOptional() @IsInt() @Min(1) tokensPerDay?: number;
  @IsOptional() @IsInt() @Min(1) tokensPerMonth?: number;
}

export type Limits = Pick<LimitSettings, keyof LimitSettings>;
export const LIMIT_NAMES = ['requestsPerMinute', 'tokensPerMinute', 'tokensPerDay', 'tokensPerMonth'] as const;
export type LimitName = (typeof LIMIT_NAMES)[number];

/** Only the limits that are set, as a plain object (what Redis and the API store and show). */
export function cleanLimits(limits: Limits | undefined | null): Limits {
  const out: Limits = {};
  for (const name of LIMIT_NAMES) {
    const value = limits?.[name];
    if (typeof value === 'number') out[name] = value;
  }
  return out;
}
