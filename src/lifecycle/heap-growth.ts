import { setFlagsFromString } from 'node:v8';

/**
 * How far V8 lets the old generation grow past what survived the last full collection before it collects again:
 * 1 + HEAP_GROWING_PERCENT / 100 times. V8's own factor goes up to 4x when collections look cheap, and a
 * gateway's garbage is mostly short-lived request objects that a scavenge happened to promote (any request in
 * flight during one), so under load the old generation filled with them: peak RSS ~240 MB at c=32 for ~35 MB
 * live. At 2x, peak RSS was ~170 MB for the same CPU per request (docs/performance.md, issue 20).
 */
export const HEAP_GROWING_PERCENT = 100;

/**
 * Applies the growth factor unless the process was started with its own (`node --heap-growing-percent=N`). V8
 * reads this flag whenever it sets the next collection's limit, so setting it at startup takes effect.
 */
export function limitHeapGrowth(execArgv: readonly string[] = process.execArgv): void {
  if (execArgv.some((arg) => arg.startsWith('--heap-growing-percent') || arg.startsWith('--heap_growing_percent'))) return;
  setFlagsFromString(`--heap-growing-percent=${HEAP_GROWING_PERCENT}`);
}
