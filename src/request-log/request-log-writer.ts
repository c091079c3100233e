import {
  Inject,
  Injectable,
  type BeforeApplicationShutdown,
  type OnApplicationBootstrap,
} from '@nestjs/common';
import { GatewayConfig } from '../config/config.schema';
import { AppLogger } from '../common/logging/logger';
import { MetricsService } from '../metrics/metrics.service';
import { keptContent, type UnredactedContent } from './kept-content';
import { RequestLogRedactor } from './request-log-redactor';
import type { RequestLogEntry, RequestLogRecord } from './request-log-entry';
import { REQUEST_LOG_STORE, type RequestLogStore } from './request-log.repository';

/** Entries per write to the store. */
const BATCH = 100;
/** How long the first entry of a batch waits for others to join it. */
export const GATHER_MS = 25;
/** A batch the store refused is tried this many times (with a growing pause) before it is dropped and counted. */
const ATTEMPTS = 5;
const FIRST_RETRY_MS = 500;
const MAX_RETRY_MS = 30_000;
/** A write the store has not answered by then counts as refused (a retry writes nothing twice). */
const APPEND_TIMEOUT_MS = 10_000;
/** How long shutdown waits for the queue to reach the store. */
const SHUTDOWN_FLUSH_MS = 3_000;
/** Past partitions are dropped and the coming ones made (PostgreSQL) this often. */
const MAINTENANCE_MS = 3_600_000;

/** An entry on its way to the store: its content (when its team keeps it) is redacted when written, not before. */
export interface PendingEntry {
  entry: RequestLogEntry;
  content?: UnredactedContent;
}

/**
 * Writes request log entries to the store, never on a request's path: entries wait in a bounded queue
 * (`logging.requests.queueSize`) and go in batches. If the store is slow or down the queue fills, and past its
 * size the oldest entry is dropped; a batch the store refuses is retried with a growing pause, then dropped. Every
 * entry that is not kept is counted (`switchyard_request_log_dropped_total{reason}`), never lost silently; a
 * retried batch writes nothing twice (the stores are idempotent by entry id). Content is redacted here, once per
 * entry, with the one policy (RequestLogRedactor), and between two entries the event loop gets a turn.
 */
@Injectable()
export class RequestLogWriter implements OnApplicationBootstrap, BeforeApplicationShutdown {
  private queue: PendingEntry[] = [];
  private flushing = false;
  private stopped = false;
  private maintenance?: NodeJS.Timeout;

  constructor(
    @Inject(REQUEST_LOG_STORE) private readonly store: RequestLogStore,
    private readonly redactor: RequestLogRedactor,
    private readonly config: GatewayConfig,
    private readonly metrics: MetricsService,
    private readonly logger: AppLogger,
  ) {}

  onApplicationBootstrap(): void {
    this.maintain();
    this.maintenance = setInterval(() => this.maintain(), MAINTENANCE_MS).unref();
  }

  /** Entries waiting for the store. */
  get backlog(): number {
    return this.queue.length;
  }

  enqueue(pending: PendingEntry): void {
    if (this.stopped) return this.drop(1, 'shutdown');
    if (this.queue.length >= this.config.logging.requests.queueSize) {
      this.queue.shift();
      this.drop(1, 'queue_full');
    }
    this.queue.push(pending);
    // The gauge is set by each batch; while none goes (a stalled store), every 64 entries and at the queue's size.
    if ((this.queue.length & 63) === 0 || this.queue.length >= this.config.logging.requests.queueSize)
      this.metrics.requestLogQueued.set(this.queue.length);
    if (!this.flushing) {
      this.flushing = true;
      // The entries of the next few milliseconds go in one batch: a write per request would cost the gateway more
      // in Redis round trips (replies parsed, promises settled) than building the entries does.
      setTimeout(() => void this.flush(), GATHER_MS).unref();
    }
  }

  /** Writes batches until the queue is empty (retrying a refused batch with a pause). */
  private async flush(): Promise<void> {
    try {
      while (this.queue.length > 0 && !this.stopped) {
        const batch = this.queue.splice(0, BATCH);
        this.metrics.requestLogQueued.set(this.queue.length);
        const records = await this.prepare(batch);
        if (await this.write(records)) this.metrics.requestLogWritten.inc(records.length);
        else this.drop(records.length, this.stopped ? 'shutdown' : 'store_failed');
      }
    } finally {
      this.flushing = false;
    }
  }

  /** Writes one batch: true once the store took it, false when it refused every attempt (or shutdown came). */
  private async write(records: RequestLogRecord[]): Promise<boolean> {
    for (let attempt = 1, pause = FIRST_RETRY_MS; ; attempt++, pause = Math.min(pause * 2, MAX_RETRY_MS)) {
      try {
        const { evicted } = await withDeadline(this.store.append(records), APPEND_TIMEOUT_MS);
        if (evicted > 0) this.metrics.requestLogDropped.inc({ reason: 'evicted' }, evicted);
        return true;
      } catch (error) {
        this.logger.pino.warn(
          { err: error, entries: records.length, attempt },
          `the request log's store refused a batch of ${records.length} entries${attempt < ATTEMPTS ? `; trying again in ${pause} ms` : '; dropped'}`,
        );
        if (attempt >= ATTEMPTS || this.stopped) return false;
        await pauseFor(pause);
      }
    }
  }

  /** The batch as the store keeps it: content redacted and cut to size, an entry a turn of the event loop. */
  private async prepare(batch: PendingEntry[]): Promise<RequestLogRecord[]> {
    const records: RequestLogRecord[] = [];
    for (const { entry, content } of batch) {
      if (!content) {
        records.push({ entry });
        continue;
      }
      records.push({ entry, content: keptContent(content, this.redactor) });
      await new Promise((resolve) => setImmediate(resolve));
    }
    return records;
  }

  private drop(count: number, reason: 'queue_full' | 'store_failed' | 'shutdown'): void {
    this.metrics.requestLogDropped.inc({ reason }, count);
  }

  private maintain(): void {
    this.store.expire(new Date()).catch((error: unknown) => {
      this.logger.pino.warn({ err: error }, "the request log's store could not drop expired entries");
    });
  }

  async beforeApplicationShutdown(): Promise<void> {
    clearInterval(this.maintenance);
    const deadline = Date.now() + SHUTDOWN_FLUSH_MS;
    while ((this.queue.length > 0 || this.flushing) && Date.now() < deadline) {
      if (!this.flushing) void this.flush();
      await pauseFor(20);
    }
    this.stopped = true;
    if (this.queue.length > 0) this.drop(this.queue.length, 'shutdown');
    this.queue = [];
    await this.store.close();
  }
}

/** The promise's outcome, or a rejection once `ms` have passed without one. */
function withDeadline<T>(work: Promise<T>, ms: number): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const deadline = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`no answer within ${ms} ms`)), ms).unref();
  });
  return Promise.race([work, deadline]).finally(() => clearTimeout(timer));
}

/** A pause that does not keep the process alive. */
function pauseFor(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms).unref());
}
