import type { Response } from 'express';
import { GatewayException } from '../core/errors/gateway.exception';

/**
 * Counts requests (streams included) still being answered, so a SIGTERM can wait
 * for them to finish before the process exits; and tells those still running when the
 * grace period is over (`cutSignal`), so they end with an error the client can read.
 */
export class InFlightTracker {
  private count = 0;
  private waiters: Array<() => void> = [];
  private readonly cut = new AbortController();
  draining = false;

  /** Aborts, with a `server_shutting_down` GatewayException as its reason, when the drain's grace period ends. */
  get cutSignal(): AbortSignal {
    return this.cut.signal;
  }

  /** The grace period is over: every request still in flight is ended by the gateway. */
  cutRemaining(): void {
    this.cut.abort(
      new GatewayException(
        'server_shutting_down',
        'The gateway is shutting down and ended this request at the end of its grace period; retry it.',
        {
          headers: { 'retry-after': '1' },
        },
      ),
    );
  }

  begin(res: Response): void {
    this.count++;
    // Emitted once per response: `on` holds no once-wrapper for a stream's life.
    res.on('close', () => {
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
