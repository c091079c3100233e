import { InvalidArgumentError } from 'commander';
import { MAX_BUDGET, MAX_COUNT_LIMIT } from '../core/limit-settings';

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
