import { constants, PerformanceObserver } from 'node:perf_hooks';
import { getHeapStatistics, setFlagsFromString } from 'node:v8';

/**
 * How far V8 lets the old generation grow past what survived the last full collection before it collects again:
 * 1 + HEAP_GROWING_PERCENT / 100 times. V8's own factor goes up to 4x when collections look cheap, and a
 * gateway's garbage is mostly short-lived request objects that a scavenge happened to promote (any request in
 * flight during one), so under load the old generation filled with them: peak RSS ~240 MB at c=32 for ~35 MB
 * live. At 2x, peak RSS was ~170 MB for the same CPU per request (docs/performance.md, issue 20).
 */
export const HEAP_GROWING_PERCENT = 100;

/**
 * The most room, in bytes, the old generation is given past its live size (while that is under 2x): a heap that
 * holds many streams is bounded by its live size plus this, not twice its live size. 10,000 held streams are
 * ~350 MB live; at 2x their old generation grew to ~700 MB before a full collection, and peak RSS was ~80 KB a
 * stream for ~35 KB live (docs/performance.md, held streams). Below 64 MB live (ordinary request traffic) the
 * growth stays 2x.
 */
export const GROWTH_ROOM_BYTES = 64 * 1024 * 1024;

/** The least growth, in percent, however large the heap: full collections of a large heap stay rare. */
export const MIN_GROWING_PERCENT = 20;

/** The growth for a live old generation of `liveBytes`: 2x up to GROWTH_ROOM_BYTES, then that much room. */
export function growingPercentFor(liveBytes: number): number {
  const percent = Math.floor((100 * GROWTH_ROOM_BYTES) / Math.max(liveBytes, 1) / 10) * 10; // steps of 10
  return Math.min(HEAP_GROWING_PERCENT, Math.max(MIN_GROWING_PERCENT, percent));
}

/** A request body at least this large lets V8 choose the growth again for a while (HeapGrowthPolicy.noteBody). */
export const LARGE_BODY_BYTES = 64 * 1024;

/** How long after the last large body V8's own growth factor stays in force. */
export const RELAXED_FOR_MS = 30_000;

const flag = (percent: number) => `--heap-growing-percent=${percent}`;

/**
 * The old generation held to 2x its live size (at most GROWTH_ROOM_BYTES past it once the heap is large), except
 * while large bodies pass.
 *
 * Why the exception: every scavenge promotes the prompts of the requests in flight (half a megabyte each at
 * 100k tokens), so with big prompts the old generation fills with dead strings fast, and at 2x full collections
 * (which walk the whole live heap to free them) came 3.5x as often (42 against 12 in one run of the big-prompt
 * scenario): +20-50 % of CPU per big request and small requests' p99 beside them ~1.4x worse
 * (docs/performance.md, big prompts). V8's
 * own factor, after a body of LARGE_BODY_BYTES or more and until RELAXED_FOR_MS without one, costs memory only
 * while such traffic lasts. V8 reads the flag whenever it sets the next collection's limit, so a change takes
 * effect at the next full collection.
 */
export class HeapGrowthPolicy {
  private applied = false;
  private relaxedUntil = 0;
  private timer?: NodeJS.Timeout;
  /** The growth in force outside a large-body spell (growingPercentFor the last live size seen). */
  private percent = HEAP_GROWING_PERCENT;

  constructor(
    private readonly setFlags: (flags: string) => void = setFlagsFromString,
    private readonly relaxForMs = RELAXED_FOR_MS,
  ) {}

  /** At startup: the 2x limit, unless the process was started with its own (`node --heap-growing-percent=N`). */
  apply(execArgv: readonly string[] = process.execArgv): void {
    if (
      execArgv.some(
        (arg) => arg.startsWith('--heap-growing-percent') || arg.startsWith('--heap_growing_percent'),
      )
    )
      return;
    this.applied = true;
    this.setFlags(flag(HEAP_GROWING_PERCENT));
  }

  /**
   * After each full collection (`watchFullCollections`): the live size it left, which sets the growth allowed
   * until the next. O(1); a flag set only when the growth changes (in steps of 10 %).
   */
  noteLive(liveBytes: number): void {
    if (!this.applied) return;
    const percent = growingPercentFor(liveBytes);
    if (percent === this.percent) return;
    this.percent = percent;
    if (this.relaxedUntil === 0) this.setFlags(flag(percent));
  }

  /** Tells noteLive the heap's size after every full collection (one callback per full collection, none per scavenge). */
  watchFullCollections(): void {
    if (!this.applied) return;
    new PerformanceObserver((list) => {
      for (const entry of list.getEntries())
        if ((entry as { detail?: { kind?: number } }).detail?.kind === constants.NODE_PERFORMANCE_GC_MAJOR)
          this.noteLive(getHeapStatistics().used_heap_size);
    }).observe({ entryTypes: ['gc'] });
  }

  /** Every request body's size, once read: O(1), a flag set only when the state changes. */
  noteBody(bytes: number): void {
    if (!this.applied || bytes < LARGE_BODY_BYTES) return;
    if (this.relaxedUntil === 0) this.setFlags(flag(0)); // 0: V8's own, dynamic factor
    this.relaxedUntil = Date.now() + this.relaxForMs;
    this.timer ??= this.expireIn(this.relaxForMs);
  }

  private expireIn(ms: number): NodeJS.Timeout {
    const timer = setTimeout(() => this.expire(), ms);
    timer.unref();
    return timer;
  }

  private expire(): void {
    this.timer = undefined;
    const left = this.relaxedUntil - Date.now();
    if (left > 0) {
      this.timer = this.expireIn(left);
      return;
    }
    this.relaxedUntil = 0;
    this.setFlags(flag(this.percent));
  }
}

/** The process's one policy: applied by main.ts, told of bodies by the body reader. */
export const heapGrowth = new HeapGrowthPolicy();
