import { LIMIT_CATALOGUE, type LimitName } from '../core/limit-settings';

/** A fixed UTC window: its id (part of the counter's key) and when it ends. */
export interface LimitWindow {
  id: string;
  resetAt: number;
}

/** The window a counter limit counts in at `now`: the current UTC minute, day or month (from the catalogue). */
export function windowOf(limit: LimitName, now: number): LimitWindow {
  const window = LIMIT_CATALOGUE[limit].window;
  if (window === 'minute') {
    const minute = Math.floor(now / 60_000);
    return { id: `m${minute}`, resetAt: (minute + 1) * 60_000 };
  }
  const date = new Date(now);
  if (window === 'day') {
    return {
      id: `d${date.toISOString().slice(0, 10)}`,
      resetAt: Date.UTC(date.getUTCFullYear(), date.getUTCMonth(), date.getUTCDate() + 1),
    };
  }
  if (window === 'month') {
    return {
      id: `mo${date.toISOString().slice(0, 7)}`,
      resetAt: Date.UTC(date.getUTCFullYear(), date.getUTCMonth() + 1, 1),
    };
  }
  // A limit with no window (concurrency) is not a counter; asking for its window is a bug, not a month.
  throw new Error(`limit ${limit} has no window`);
}

/** OpenAI's reset-header format: `12ms`, `1s`, `6m0s`, `3h2m1s`. */
export function formatDuration(ms: number): string {
  if (ms < 1000) return `${Math.max(0, Math.ceil(ms))}ms`;
  const total = Math.ceil(ms / 1000);
  const hours = Math.floor(total / 3600);
  const minutes = Math.floor((total % 3600) / 60);
  const seconds = total % 60;
  if (hours > 0) return `${hours}h${minutes}m${seconds}s`;
  if (minutes > 0) return `${minutes}m${seconds}s`;
  return `${seconds}s`;
}
