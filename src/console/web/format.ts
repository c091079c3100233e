// How the console writes numbers, money and limits. No DOM here: unit-tested on its own (test/unit/console-format.spec.ts).
import { isMoneyLimit, LIMIT_CATALOGUE, LIMIT_NAMES, type LimitName } from '../../core/limit-catalogue';

const LOCALE = 'en-US';

export const formatNumber = (n: number | null | undefined): string =>
  n === null || n === undefined ? '-' : n.toLocaleString(LOCALE);

/**
 * An amount of money by its magnitude: the currency's own decimals (two for USD, none for JPY) down to its smallest
 * unit, and two significant digits below it, so a fraction of a cent is neither 0.00 nor a row of zeros
 * ($1,234.50, $0.42, $0.000031, $0.00). A code Intl does not know is written after the number.
 */
export function formatMoney(amount: number, currency: string): string {
  let format: Intl.NumberFormat;
  try {
    format = new Intl.NumberFormat(LOCALE, { style: 'currency', currency });
  } catch {
    return `${amount.toLocaleString(LOCALE, { maximumSignificantDigits: 6 })} ${currency}`;
  }
  const smallestUnit = 10 ** -(format.resolvedOptions().maximumFractionDigits ?? 2);
  if (amount === 0 || Math.abs(amount) >= smallestUnit) return format.format(amount);
  return new Intl.NumberFormat(LOCALE, { style: 'currency', currency, maximumSignificantDigits: 2 }).format(
    amount,
  );
}

/** A cost in nano-units; requests without a price are said to be unpriced, never shown as free. */
export function formatCost(
  nanos: number | null | undefined,
  currency: string,
  unpricedRequests = 0,
  requests = 0,
): string {
  // Unpriced first: the usage API's cost is null when every request was unpriced, and that is not "-".
  if (requests > 0 && unpricedRequests === requests) return 'unpriced';
  if (nanos === null || nanos === undefined) return '-';
  const amount = formatMoney(nanos / 1e9, currency);
  return unpricedRequests > 0 ? `${amount} + ${unpricedRequests} unpriced` : amount;
}

/** What the spend of a usage row is made of (GET /admin/v1/usage): cost_nanos is null when no request had a price. */
export interface Spend {
  requests: number;
  cost_nanos: number | null;
  cost_unknown_requests: number;
}

/**
 * The spend of some rows (a day's, across teams or models) in the currency's unit, for a chart: null when they had
 * requests and none of them had a price, so the chart shows no point there and says "unknown", never $0; the
 * priced part when only some had one (the cards and tables say how many were unpriced).
 */
export function spendOf(rows: Spend[]): number | null {
  let requests = 0;
  let unpriced = 0;
  let nanos = 0;
  for (const row of rows) {
    requests += row.requests;
    unpriced += row.cost_unknown_requests;
    nanos += row.cost_nanos ?? 0;
  }
  return requests > 0 && unpriced >= requests ? null : nanos / 1e9;
}

/** The limit's name for people, from the limit catalogue (`tokensPerDay` -> `Tokens / day`). */
export function limitLabel(name: string): string {
  return (LIMIT_CATALOGUE as Record<string, { label: string } | undefined>)[name]?.label ?? name;
}

/** A limit's value in its unit: budgets as money, the others as counts. */
export function formatLimitValue(name: string, value: number, currency: string): string {
  return name in LIMIT_CATALOGUE && isMoneyLimit(name as LimitName)
    ? formatMoney(value, currency)
    : formatNumber(value);
}

/** A team's limits in the catalogue's order, each as `Label: value`. */
export function describeLimits(limits: Partial<Record<LimitName, number>>, currency: string): string[] {
  return LIMIT_NAMES.filter((name) => limits[name] !== undefined).map(
    (name) => `${limitLabel(name)}: ${formatLimitValue(name, limits[name]!, currency)}`,
  );
}
