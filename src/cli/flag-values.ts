import { InvalidArgumentError } from 'commander';
import { isMoneyLimit } from '../core/limit-catalogue';
import {
  LIMIT_CATALOGUE,
  LIMIT_NAMES,
  MAX_BUDGET,
  MAX_COUNT_LIMIT,
  type LimitName,
} from '../core/limit-settings';

/*
 * Parsers of the CLI's number flags. They throw commander's InvalidArgumentError, which commander prints with the
 * flag it came from ("option '--tpm <n>' argument '...' is invalid. ..."), so a refusal names what to fix.
 */

/** A count (a limit, seconds, entries): a whole number from 1 up to the largest the limits take exactly. */
export function positiveInt(value: string): number {
  const n = Number(value);
  if (!Number.isInteger(n) || n < 1) throw new InvalidArgumentError(`"${value}" is not a positive integer`);
  if (n > MAX_COUNT_LIMIT) throw new InvalidArgumentError(`"${value}" is more than ${MAX_COUNT_LIMIT}`);
  return n;
}

/** A budget in the billing currency, to the micro-unit. */
export function positiveAmount(value: string): number {
  const n = Number(value);
  if (!Number.isFinite(n) || n <= 0 || Math.round(n * 1e6) / 1e6 !== n)
    throw new InvalidArgumentError(`"${value}" is not a positive amount (at most 6 decimals)`);
  if (n > MAX_BUDGET) throw new InvalidArgumentError(`"${value}" is more than ${MAX_BUDGET}`);
  return n;
}

/**
 * One `--ceiling-limit <limit>=<n>` (repeatable), added to those before it: the limit by its flag's name (`rpm`,
 * `budget-per-day`) or its own (`requestsPerMinute`); `<limit>=none` drops that bound (in an update).
 */
export function ceilingLimit(
  value: string,
  previous: Partial<Record<LimitName, number | null>> = {},
): Partial<Record<LimitName, number | null>> {
  const at = value.indexOf('=');
  const key = value.slice(0, at);
  const name = LIMIT_NAMES.find((limit) => limit === key || LIMIT_CATALOGUE[limit].flag === `--${key}`);
  if (at < 1 || !name) {
    const known = LIMIT_NAMES.map((limit) => LIMIT_CATALOGUE[limit].flag.slice(2)).join(', ');
    throw new InvalidArgumentError(`"${value}" is not <limit>=<n> with a limit among ${known}`);
  }
  const given = value.slice(at + 1);
  const parse = isMoneyLimit(name) ? positiveAmount : positiveInt;
  return { ...previous, [name]: given === 'none' ? null : parse(given) };
}
