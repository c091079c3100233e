import { LIMIT_CATALOGUE, type LimitName, type LimitUnit } from '../core/limit-catalogue';

/** What a request reserves at admission, or really used when it is accounted. */
export interface Measure {
  tokens: number;
  /** Nano-units of the billing currency. */
  costNanos: number;
}

/** What a refusal message is given: the limit, whose it is, and the counter's numbers (in the unit's counter). */
export interface RefusalFacts {
  name: LimitName;
  who: string;
  used: number;
  limit: number;
  cost: number;
  /** "resets at ... (in ...)", for a windowed limit. */
  when: string;
  /** A counter value as people read it (money for budgets). */
  show: (counterValue: number) => string;
}

/**
 * How each unit of the catalogue (limit-catalogue.ts) is enforced. Every decision the limits service makes about a
 * limit reads its unit's row here, so no code compares a unit to a string: a new limit of an existing unit is one
 * catalogue row, and a new unit is one row here (the Record makes the compiler ask for it).
 */
export interface UnitRules {
  /** Taken by MCP tool calls (docs/mcp.md) rather than by model requests: each kind of call checks only its own. */
  toolCalls: boolean;
  /** Leases on the requests in flight (released when a request is accounted) rather than a counter in a window. */
  leases: boolean;
  /** What one request takes from the counter, from what it reserves (or, when settled, really used). */
  charge(measure: Measure): number;
  /** The counter's limit from the limit as set (budgets are set in the currency, counted in nano-units). */
  counterLimit(set: number): number;
  /** Admission needs the request's token estimate (so callers can skip estimating when no limit needs it). */
  needsTokenEstimate: boolean;
  /** Admission needs the request's worst-case cost (and refuses a model with no price). */
  needsCostEstimate: boolean;
  /** What was charged is an estimate, settled to the real count when the request is accounted. */
  settles: boolean;
  /** The x-ratelimit-*-<header> family that reports this unit, if any. */
  header?: 'requests' | 'tokens';
  /** Counted in nano-units of the billing currency (shown as money). */
  money: boolean;
  /** One request alone asks for more than the whole limit allows: why waiting cannot help (undefined: it cannot). */
  tooLarge?(facts: RefusalFacts): string;
  /** The refusal when the limit is reached; `retryAfter` 'window' waits for the window's end. */
  reached(facts: RefusalFacts): { message: string; retryAfter: 'window' | 'one-second' };
}

const perRequest = () => 1;

export const UNIT_RULES: Record<LimitUnit, UnitRules> = {
  concurrency: {
    toolCalls: false,
    leases: true,
    charge: perRequest,
    counterLimit: (set) => set,
    needsTokenEstimate: false,
    needsCostEstimate: false,
    settles: false,
    money: false,
    reached: ({ name, who, used, limit }) => ({
      message: `${name} limit of ${who} reached (${used}/${limit} requests in flight); retry when one ends.`,
      retryAfter: 'one-second',
    }),
  },
  requests: {
    toolCalls: false,
    leases: false,
    charge: perRequest,
    counterLimit: (set) => set,
    needsTokenEstimate: false,
    needsCostEstimate: false,
    settles: false,
    header: 'requests',
    money: false,
    reached: ({ name, who, used, limit, when }) => ({
      message: `${name} limit of ${who} reached (${used}/${limit} requests used); it ${when}.`,
      retryAfter: 'window',
    }),
  },
  tokens: {
    toolCalls: false,
    leases: false,
    charge: ({ tokens }) => tokens,
    counterLimit: (set) => set,
    needsTokenEstimate: true,
    needsCostEstimate: false,
    settles: true,
    header: 'tokens',
    money: false,
    tooLarge: ({ name, who, limit, cost }) =>
      `This request reserves ${cost} tokens, more than the ${name} limit of ${who} (${limit}) allows; lower max_tokens.`,
    reached: ({ name, who, used, limit, cost, when }) => ({
      message: `${name} limit of ${who} reached (${used}/${limit} tokens used, this request reserves ${cost}); it ${when}.`,
      retryAfter: 'window',
    }),
  },
  cost: {
    toolCalls: false,
    leases: false,
    charge: ({ costNanos }) => costNanos,
    counterLimit: (set) => Math.round(set * 1e9),
    needsTokenEstimate: false,
    needsCostEstimate: true,
    settles: true,
    money: true,
    tooLarge: ({ name, who, limit, cost, show }) =>
      `This request may cost up to ${show(cost)}, more than the ${name} of ${who} (${show(limit)}); lower max_tokens.`,
    reached: ({ name, who, used, limit, cost, when, show }) => ({
      message: `${name} of ${who} reached (${show(used)} of ${show(limit)} spent, this request may cost up to ${show(cost)}); it ${when}.`,
      retryAfter: 'window',
    }),
  },
  toolCalls: {
    toolCalls: true,
    leases: false,
    charge: perRequest,
    counterLimit: (set) => set,
    needsTokenEstimate: false,
    needsCostEstimate: false,
    settles: false,
    money: false,
    reached: ({ name, who, used, limit, when }) => ({
      message: `${name} limit of ${who} reached (${used}/${limit} MCP calls made: tools, prompts and resource reads); it ${when}.`,
      retryAfter: 'window',
    }),
  },
};

/** The rules of a limit's unit (from its catalogue row). */
export function rulesOf(name: LimitName): UnitRules {
  return UNIT_RULES[LIMIT_CATALOGUE[name].unit];
}
