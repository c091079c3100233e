// No imports and no decorators: the console's page (src/console/web) bundles this file too.

/**
 * The largest limit each unit takes: counters are numbers, exact only up to Number.MAX_SAFE_INTEGER (above it a
 * limit would compare wrongly, and 2^53 + 1 is not even stored as written). Budgets are counted in nano-units of
 * the currency, so the largest budget is that many nano-units, to the micro-unit a budget is given in.
 */
export const MAX_COUNT_LIMIT = Number.MAX_SAFE_INTEGER;
export const MAX_BUDGET = Math.floor(Number.MAX_SAFE_INTEGER / 1e3) / 1e6;

/**
 * Every limit in one table: what it counts (`concurrency`: leases on the requests in flight, released when a
 * request is accounted and expired if its replica dies; `requests`, `tokens` and `cost` (nano-units of the billing
 * currency): counters), the fixed UTC window a counter counts in, the code of a refusal, its CLI flag, and its
 * label for people (the console). The limit settings (config, admin API, their validation), the limits service, the
 * window function, the CLI and the console derive from it, so a new limit is a row here, nothing else. (`toolCalls`
 * counts MCP requests through /mcp that do work on a server, tools/call, prompts/get and resources/read, not lists:
 * docs/mcp.md#limits; the only unit that model requests do not take from.)
 */
export type LimitUnit = 'concurrency' | 'requests' | 'tokens' | 'cost' | 'toolCalls';

export interface LimitDefinition {
  unit: LimitUnit;
  window?: 'minute' | 'day' | 'month';
  refusal: 'rate_limit_exceeded' | 'quota_exceeded' | 'budget_exceeded';
  flag: string;
  label: string;
}

const LIMIT_ROWS = {
  concurrentRequests: {
    unit: 'concurrency',
    refusal: 'rate_limit_exceeded',
    flag: '--concurrency',
    label: 'Concurrent requests',
  },
  requestsPerMinute: {
    unit: 'requests',
    window: 'minute',
    refusal: 'rate_limit_exceeded',
    flag: '--rpm',
    label: 'Requests / minute',
  },
  tokensPerMinute: {
    unit: 'tokens',
    window: 'minute',
    refusal: 'rate_limit_exceeded',
    flag: '--tpm',
    label: 'Tokens / minute',
  },
  tokensPerDay: {
    unit: 'tokens',
    window: 'day',
    refusal: 'quota_exceeded',
    flag: '--tpd',
    label: 'Tokens / day',
  },
  tokensPerMonth: {
    unit: 'tokens',
    window: 'month',
    refusal: 'quota_exceeded',
    flag: '--tokens-per-month',
    label: 'Tokens / month',
  },
  budgetPerDay: {
    unit: 'cost',
    window: 'day',
    refusal: 'budget_exceeded',
    flag: '--budget-per-day',
    label: 'Budget / day',
  },
  budgetPerMonth: {
    unit: 'cost',
    window: 'month',
    refusal: 'budget_exceeded',
    flag: '--budget-per-month',
    label: 'Budget / month',
  },
  toolCallsPerMinute: {
    unit: 'toolCalls',
    window: 'minute',
    refusal: 'rate_limit_exceeded',
    flag: '--tool-calls-per-minute',
    label: 'Tool calls / minute',
  },
} satisfies Record<string, LimitDefinition>;

export type LimitName = keyof typeof LIMIT_ROWS;
export const LIMIT_CATALOGUE: Record<LimitName, LimitDefinition> = LIMIT_ROWS;
/** The limits in the catalogue's order (the order the CLI, the console and the headers list them in). */
export const LIMIT_NAMES = Object.keys(LIMIT_CATALOGUE) as LimitName[];

/** What each limit counts (the catalogue's `unit`). */
export const LIMIT_KINDS = Object.fromEntries(
  LIMIT_NAMES.map((name) => [name, LIMIT_CATALOGUE[name].unit]),
) as Record<LimitName, LimitUnit>;

/**
 * Whether a unit's limits are money (a budget in billing.currency, to the micro-unit) or a count (whole numbers):
 * how the settings validate them, the CLI parses them and the console shows them. A new unit is a row here.
 */
export const UNIT_IS_MONEY: Record<LimitUnit, boolean> = {
  concurrency: false,
  requests: false,
  tokens: false,
  cost: true,
  toolCalls: false,
};

/** Whether this limit is a budget (money) rather than a count. */
export function isMoneyLimit(name: LimitName): boolean {
  return UNIT_IS_MONEY[LIMIT_CATALOGUE[name].unit];
}
