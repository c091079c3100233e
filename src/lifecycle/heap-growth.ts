import { setFlagsFromString } from 'node:v8';

/**
 * How far V8 lets the old generation grow past what survived the last full collection before it collects again:
 * 1 + HEAP_GROWING_PERCENT / 100 times. V8's own factor goes up to 4x when collections look cheap, and a
 * gateway's garbage is mostly short-lived request objects that a scavenge happened to promote (any request in
 * flight during one), so under load the old generation filled with them: peak RSS ~240 MB at c=32 for ~35 MB
 * live. At 2x, peak RSS was ~170 MB for the same CPU per request (docs/performance.md, issue 20).
 */
export const HEAP_GROWING_PERCENT = 100;

/** A request body at least this large lets V8 choose the growth again for a while (HeapGrowthPolicy.noteBody). */
export const LARGE_BODY_BYTES = 64 * 1024;

/** How long after the last large body V8's own growth factor stays in force. */
export const RELAXED_FOR_MS = 30_000;

const flag = (percent: number) => `--heap-growing-percent=${percent}`;

/**
 * The old generation held to 2x its live size, except while large bodies pass.
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
    this.setFlags(flag(HEAP_GROWING_PERCENT));
  }
}

/** The process's one policy: applied by main.ts, told of bodies by the body reader. */
export const heapGrowth = new HeapGrowthPolicy();
