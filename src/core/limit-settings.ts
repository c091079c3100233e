import 'reflect-metadata';
import { Type } from 'class-transformer';
import { IsArray, IsInt, IsNumber, IsOptional, IsString, Max, Min, ValidateNested } from 'class-validator';
import { isMoneyLimit, LIMIT_NAMES, MAX_BUDGET, MAX_COUNT_LIMIT, type LimitName } from './limit-catalogue';

/**
 * The limits a team (and, narrower, a token) can have: one optional field per row of the limit catalogue, validated
 * by its unit (a count: a whole number from 1; money, in billing.currency: up to micro-unit precision). Used by the
 * config file and by the admin API bodies, so both accept exactly the same shape. Windows are fixed UTC windows:
 * the current minute, day (00:00 UTC) and month.
 */
/* eslint-disable @typescript-eslint/no-unsafe-declaration-merging, @typescript-eslint/no-empty-object-type --
   the class carries the validation rules, the interface its fields, both from the catalogue */
export class LimitSettings {}
export interface LimitSettings extends Partial<Record<LimitName, number>> {}
/* eslint-enable @typescript-eslint/no-unsafe-declaration-merging, @typescript-eslint/no-empty-object-type */

// The class-validator rules a decorator on each field would register, applied from the catalogue's rows in the order
// decorators apply (the last written first), so the messages come in the same order.
for (const name of LIMIT_NAMES) {
  const field = LimitSettings.prototype as object;
  const rules = isMoneyLimit(name)
    ? [
        IsOptional(),
        IsNumber({ maxDecimalPlaces: 6, allowNaN: false, allowInfinity: false }),
        Min(0.000001),
        Max(MAX_BUDGET),
      ]
    : [IsOptional(), IsInt(), Min(1), Max(MAX_COUNT_LIMIT)];
  for (const rule of rules.reverse()) rule(field, name);
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

/**
 * A team's ceiling as the config file and the admin API take it (teams/team-ceiling.ts): the models (names or
 * `*` globs) and limits a team-admin may give their team at most. In an update, null drops a part (or, inside
 * limits, one limit) of the ceiling.
 */
export class CeilingSettings {
  @IsOptional() @IsArray() @IsString({ each: true }) models?: string[];
  @IsOptional() @ValidateNested() @Type(() => LimitSettings) limits?: LimitSettings;
}
