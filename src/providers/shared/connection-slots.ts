import { GatewayException } from '../../core/errors/gateway.exception';

/**
 * At most `capacity` requests to one backend at once, each holding its slot until its response body is done
 * (a stream holds one for minutes). A request that finds them all taken waits at most `maxWaitMs`, then gets a
 * 503 `upstream_busy` with Retry-After: undici's own pool queues without bound and without a timeout, so 500
 * slow streams once left every other team's request hanging for over a minute while health stayed green.
 */
export class ConnectionSlots {
  private used = 0;
  private readonly waiting: Array<{ grant: () => void }> = [];

  constructor(
    private readonly backendId: string,
    private readonly capacity: number,
    private readonly maxWaitMs: number,
  ) {}

  get inUse(): number {
    return this.used;
  }

  /** Resolves with the slot's release function (idempotent); rejects with 503 after maxWaitMs, or on abort. */
  acquire(signal: AbortSignal): Promise<() => void> {
    if (this.used < this.capacity) {
      this.used++;
      return Promise.resolve(this.releaser());
    }
    return new Promise((resolve, reject) => {
      const waiter = {
        grant: () => {
          clearTimeout(timer);
          signal.removeEventListener('abort', onAbort);
          resolve(this.releaser());
        },
      };
      const leave = (error: unknown) => {
        const at = this.waiting.indexOf(waiter);
        if (at >= 0) this.waiting.splice(at, 1);
        signal.removeEventListener('abort', onAbort);
        reject(error);
      };
      const onAbort = () => {
        clearTimeout(timer);
        leave(signal.reason ?? Object.assign(new Error('aborted'), { name: 'AbortError' }));
      };
      const timer = setTimeout(
        () =>
          leave(
            new GatewayException(
              'upstream_busy',
              `Backend "${this.backendId}" has all ${this.capacity} connections in use; retry shortly.`,
              {
                headers: { 'retry-after': '1' },
                atCapacity: true,
              },
            ),
          ),
        this.maxWaitMs,
      );
      signal.addEventListener('abort', onAbort, { once: true });
      this.waiting.push(waiter);
    });
  }

  private releaser(): () => void {
    let released = false;
    return () => {
      if (released) return;
      released = true;
      const next = this.waiting.shift();
      if (next)
        next.grant(); // the slot passes straight to the next waiter
      else this.used--;
    };
  }
}
