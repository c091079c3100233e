import type Redis from 'ioredis';
import type { Logger } from 'pino';
import { redisReady } from '../redis/redis.module';
import type { RedisKeys } from '../redis/redis-keys';

/** Wrong credentials from one address in its current window, and how long until that window ends. */
export interface FailureCount {
  failures: number;
  resetInSeconds: number;
}

/**
 * Counts of wrong credentials per client address in fixed windows: the first failure opens a window of
 * `windowSeconds`, and the count is dropped when it ends.
 */
export interface FailureCounts {
  /** Counts one more failure (atomically: failures sent at once each get their own number). */
  add(address: string): Promise<FailureCount>;
  read(address: string): Promise<FailureCount>;
}

/** In Redis, so every replica sees the same count. One transaction per failure, one per check. */
export class RedisFailureCounts implements FailureCounts {
  constructor(
    private readonly redis: Redis,
    private readonly keys: RedisKeys,
    private readonly windowSeconds: number,
  ) {}

  async add(address: string): Promise<FailureCount> {
    const key = this.keys.adminKeyFailures(address);
    // SET NX EX opens the window with its expiry in the same step (an INCR then EXPIRE could leave a count that
    // never expires if the process died in between); INCR then counts.
    const replies = await this.redis
      .multi()
      .set(key, 0, 'EX', this.windowSeconds, 'NX')
      .incr(key)
      .ttl(key)
      .exec();
    return this.count(replies, 1, 2);
  }

  async read(address: string): Promise<FailureCount> {
    const key = this.keys.adminKeyFailures(address);
    return this.count(await this.redis.multi().get(key).ttl(key).exec(), 0, 1);
  }

  private count(
    replies: Array<[Error | null, unknown]> | null,
    failuresAt: number,
    ttlAt: number,
  ): FailureCount {
    if (!replies) throw new Error('the Redis transaction was aborted');
    for (const [error] of replies) if (error) throw error;
    const ttl = Number(replies[ttlAt][1]);
    // -2: no such key (no failures); -1 cannot happen (the key is only made with an expiry), but would mean a full window.
    return {
      failures: Number(replies[failuresAt][1] ?? 0),
      resetInSeconds: ttl === -1 ? this.windowSeconds : Math.max(0, ttl),
    };
  }
}

/**
 * In this process only: the fallback while Redis is unreachable (each replica then counts on its own, which
 * still slows guessing), and the store the unit tests use. Holds at most `maxAddresses`; when full, windows
 * that ended are dropped first, then the oldest.
 */
export class MemoryFailureCounts implements FailureCounts {
  private readonly windows = new Map<string, { failures: number; endsAt: number }>();

  constructor(
    private readonly windowSeconds: number,
    private readonly now: () => number = Date.now,
    private readonly maxAddresses = 100_000,
  ) {}

  async add(address: string): Promise<FailureCount> {
    const now = this.now();
    let window = this.current(address, now);
    if (!window) {
      this.makeRoom(now);
      window = { failures: 0, endsAt: now + this.windowSeconds * 1000 };
      this.windows.set(address, window);
    }
    window.failures++;
    return { failures: window.failures, resetInSeconds: Math.ceil((window.endsAt - now) / 1000) };
  }

  async read(address: string): Promise<FailureCount> {
    const now = this.now();
    const window = this.current(address, now);
    return window
      ? { failures: window.failures, resetInSeconds: Math.ceil((window.endsAt - now) / 1000) }
      : { failures: 0, resetInSeconds: 0 };
  }

  private current(address: string, now: number) {
    const window = this.windows.get(address);
    if (window && window.endsAt <= now) this.windows.delete(address);
    return window && window.endsAt > now ? window : undefined;
  }

  private makeRoom(now: number): void {
    if (this.windows.size < this.maxAddresses) return;
    for (const [address, window] of this.windows) if (window.endsAt <= now) this.windows.delete(address);
    for (const address of this.windows.keys()) {
      if (this.windows.size < this.maxAddresses) break;
      this.windows.delete(address);
    }
  }
}

/**
 * Redis while it answers, this process's own counts while it does not: an outage must not turn the throttle off
 * (guessing at full speed) nor lock every admin out (refusing the right key because nothing can be counted).
 */
export class FallingBackFailureCounts implements FailureCounts {
  private lastWarning = 0;

  constructor(
    private readonly redis: Redis,
    private readonly primary: FailureCounts,
    private readonly fallback: FailureCounts,
    private readonly log: Logger,
  ) {}

  add(address: string): Promise<FailureCount> {
    return this.either((counts) => counts.add(address));
  }

  read(address: string): Promise<FailureCount> {
    return this.either((counts) => counts.read(address));
  }

  private async either(use: (counts: FailureCounts) => Promise<FailureCount>): Promise<FailureCount> {
    if (redisReady(this.redis)) {
      try {
        return await use(this.primary);
      } catch (error) {
        this.warn(error);
      }
    } else this.warn(undefined);
    return use(this.fallback);
  }

  private warn(error: unknown): void {
    if (Date.now() - this.lastWarning < 10_000) return;
    this.lastWarning = Date.now();
    this.log.warn(
      { err: error },
      'redis unreachable: wrong admin keys are counted by each replica on its own until it is back',
    );
  }
}
