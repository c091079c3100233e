import type { ServerResponse as Response } from 'node:http';
import { writeSseComment } from '../core/sse-writer';

/** One open stream as the keep-alive timer sees it: when the relay last wrote to it. */
export interface KeepAliveWatch {
  /** The relay wrote to the stream (its silence starts again). */
  wrote(): void;
  /** The stream ended: no more comments. */
  stop(): void;
}

/**
 * SSE keep-alive comments for every open stream, from one timer: a stream that has been silent for `everyMs` gets
 * `: keep-alive` on each tick until it writes again, so no stream is silent much longer than 2 x `everyMs` (as with
 * a timer of its own). One timer for all instead of an interval and its closure per stream: held agent streams
 * are what a replica's memory is counted in (docs/performance.md, held streams). The timer runs only while a
 * stream is open and never keeps the process alive.
 */
export class KeepAlives {
  private readonly open = new Set<Watch>();
  private timer?: NodeJS.Timeout;

  constructor(private readonly everyMs: number) {}

  /** Watches `res` until `stop()`; with keep-alives off (`everyMs` 0), a watch that does nothing. */
  watch(res: Response): KeepAliveWatch {
    if (!this.everyMs) return IDLE_WATCH;
    const watch = new Watch(res, this);
    this.open.add(watch);
    if (!this.timer) {
      this.timer = setInterval(() => this.tick(), this.everyMs);
      this.timer.unref();
    }
    return watch;
  }

  /** Streams watched now (for tests and diagnostics). */
  get size(): number {
    return this.open.size;
  }

  /** `watch` is over (Watch.stop). */
  forget(watch: Watch): void {
    this.open.delete(watch);
    if (this.open.size === 0) this.stopTimer();
  }

  private tick(): void {
    const now = Date.now();
    for (const watch of this.open) {
      if (watch.res.writableEnded) this.open.delete(watch);
      else if (now - watch.lastWrite >= this.everyMs) writeSseComment(watch.res, 'keep-alive');
    }
    if (this.open.size === 0) this.stopTimer();
  }

  private stopTimer(): void {
    clearInterval(this.timer);
    this.timer = undefined;
  }
}

/**
 * One stream's watch: a single object whose methods live on its prototype, not a record and two closures over
 * it (~200 bytes more for each held stream).
 */
class Watch implements KeepAliveWatch {
  lastWrite = Date.now();

  constructor(
    readonly res: Response,
    private readonly owner: KeepAlives,
  ) {}

  wrote(): void {
    this.lastWrite = Date.now();
  }

  stop(): void {
    this.owner.forget(this);
  }
}

const IDLE_WATCH: KeepAliveWatch = { wrote: () => undefined, stop: () => undefined };
