import type { Response } from 'express';

/**
 * Counts requests (streams included) still being answered, so a SIGTERM can wait
 * for them to finish before the process exits.
 */
export class InFlightTracker {
  private count = 0;
  private waiters: Array<() => void> = [];
  draining = false;

  begin(res: Response): void {
    this.count++;
    res.once('close', () => {
      this.count--;
      if (this.count === 0) for (const wake of this.waiters.splice(0)) wake();
    });
  }

  get size(): number {
    return this.count;
  }

  /** Resolves true when every request finished, false if the grace period ran out first. */
  waitForIdle(timeoutMs: number): Promise<boolean> {
    if (this.count === 0) return Promise.resolve(true);
    return new Promise((resolve) => {
      const timer = setTimeout(() => resolve(false), timeoutMs);
      this.waiters.push(() => {
        clearTimeout(timer);
        resolve(true);
      });
    });
  }
}
