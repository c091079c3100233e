import { Inject, Injectable, type BeforeApplicationShutdown, type OnModuleInit } from '@nestjs/common';
import { GatewayConfig } from '../config/config.schema';
import { AppLogger } from '../common/logging/logger';
import type { CounterId } from '../limits/limit-counters.repository';
import { MetricsService } from '../metrics/metrics.service';
import type { UsageRecord } from './usage-record';
import { USAGE_RECORDS, type Stored, type UsageRecords } from './usage-records.repository';
import { usageReplicaAcks } from './replica-ack';

/**
 * How a record's write went: how the store took it (usage-records.repository.ts; a replaced estimate's metrics keep
 * the estimate, as counters cannot go down), or why it was not written.
 */
export type WriteResult = Stored | 'refused' | 'dropped';

/** A record plus the reservation it settles (limit counter keys and deltas) and the leases it releases. */
export interface PendingUsage {
  record: UsageRecord;
  settle: { keys: CounterId[]; deltas: number[] };
  /** Concurrency lease sets the request is in. */
  concurrencyKeys: CounterId[];
  /**
   * A survivor's record of a request whose replica stopped renewing its lease (usage/inflight-leases.ts): the
   * request's own record replaces it if it comes after all.
   */
  estimate?: boolean;
  /** When the request was admitted: a survivor's estimate of it is on the counters of a day from then to now. */
  admittedAt?: number;
  /** Told once how the write went (for a record whose metrics wait for it). */
  onWritten?: (result: WriteResult) => void;
}

const BATCH = 200;
const RETRY_MS = 500;
/** Days back a real record looks for its estimate (a request cannot outlive the marker by much more). */
const ESTIMATE_DAYS_BACK = 8;
/** How long shutdown waits for the buffer to reach Redis. */
const SHUTDOWN_FLUSH_MS = 5_000;
/** After a WAIT timed out, how long batches are written without waiting for a replica. */
const REPLICA_RETRY_MS = 5_000;

/**
 * Writes usage records to the store, never on the request's path: records are queued in
 * memory and flushed in batches. While the store is unreachable the queue is the
 * buffer (bounded by usage.bufferMaxRecords; a metric shows its size). The store writes
 * each record once (usage-records.repository.ts), so a batch retried after a dropped
 * connection never counts a record twice.
 */
@Injectable()
export class UsageWriter implements OnModuleInit, BeforeApplicationShutdown {
  private queue: PendingUsage[] = [];
  private flushing = false;
  private retryTimer?: NodeJS.Timeout;
  private readonly replicaAcks: number;
  /** Until then, batches are not held for a replica's acknowledgement (see replicated()). */
  private noReplicaUntil = 0;

  constructor(
    @Inject(USAGE_RECORDS) private readonly store: UsageRecords,
    private readonly config: GatewayConfig,
    private readonly metrics: MetricsService,
    private readonly logger: AppLogger,
  ) {
    this.replicaAcks = usageReplicaAcks(config.redis);
  }

  onModuleInit(): void {
    this.store.onWritable(() => this.schedule());
  }

  get backlog(): number {
    return this.queue.length;
  }

  enqueue(pending: PendingUsage): void {
    if (this.queue.length >= this.config.usage.bufferMaxRecords) {
      const dropped = this.queue.shift()!;
      this.metrics.usageDroppedRecords.inc();
      this.logger.pino.error({ record: dropped.record }, 'usage buffer full: oldest record dropped');
      tell(dropped, 'dropped');
    }
    this.queue.push(pending);
    this.metrics.usageBufferedRecords.set(this.queue.length);
    this.schedule();
  }

  private schedule(): void {
    if (this.flushing || this.queue.length === 0) return;
    this.flushing = true;
    // setImmediate batches the records of one event-loop turn into one pipeline.
    setImmediate(() => void this.flush());
  }

  /** Writes batches until the queue is empty or Redis fails; then retries on a timer. */
  async flush(): Promise<void> {
    try {
      while (this.queue.length > 0) {
        if (!this.store.writable) return this.retryLater();
        const batch = this.queue.slice(0, BATCH);
        const failedAt = await this.write(batch);
        const written = failedAt === -1 ? batch.length : failedAt;
        this.queue.splice(0, written);
        this.metrics.usageBufferedRecords.set(this.queue.length);
        if (failedAt !== -1) return this.retryLater();
      }
    } finally {
      this.flushing = false;
    }
  }

  /** -1 when the whole batch was written, else the index of the first record to retry. */
  private async write(batch: PendingUsage[]): Promise<number> {
    const now = Date.now();
    const results = await this.store.write(
      batch.map(({ record, settle, concurrencyKeys, estimate, admittedAt }) => ({
        record,
        settle,
        concurrencyKeys,
        estimate: estimate === true,
        otherDays: estimate ? [] : estimateDays(record.at.slice(0, 10), admittedAt, now),
      })),
      now,
    );
    for (let i = 0; i < batch.length; i++) {
      const error = results[i];
      if (!(error instanceof Error)) {
        this.wasWritten(batch[i], error); // how the store took it
        continue;
      }
      if (isConnectionError(error)) {
        this.logger.pino.warn({ err: error, backlog: this.queue.length }, 'usage write failed; will retry');
        return i;
      }
      // Redis refused this record itself (not the connection): retrying cannot help.
      this.logger.pino.error({ err: error, record: batch[i].record }, 'usage record rejected by redis');
      tell(batch[i], 'refused');
    }
    return this.replicated(batch.length);
  }

  private wasWritten(pending: PendingUsage, result: WriteResult): void {
    if (result === 'replaced-estimate' || result === 'replaced-counted-estimate') {
      const { record } = pending;
      this.logger.pino.warn(
        {
          team: record.team,
          requestId: record.requestId,
          recordId: record.id,
          metricsKeepEstimate: result === 'replaced-counted-estimate',
        },
        'a request another replica had recorded as lost (replica_lost) ended here: its own record replaced the estimate',
      );
    }
    tell(pending, result);
  }

  /**
   * -1 once the batch's masters report it replicated (or no replica answered in time), 0 to retry it whole. After a
   * WAIT that timed out because a master has no replica at all (e.g. just after a failover promoted it), batches
   * do not wait again for REPLICA_RETRY_MS: each wait would only cost its timeout and slow the writer behind a
   * growing backlog. A replica that is connected but slow is waited for every time.
   */
  private async replicated(batchSize: number): Promise<number> {
    if (this.replicaAcks === 0) return -1;
    if (Date.now() < this.noReplicaUntil) {
      this.metrics.usageUnreplicatedBatches.inc();
      return -1;
    }
    try {
      const acknowledged = await this.store.replicated(
        this.replicaAcks,
        this.config.redis.usageReplicaAckTimeoutMs,
      );
      if (!acknowledged) {
        this.metrics.usageUnreplicatedBatches.inc();
        if (await this.store.aMasterHasNoReplica()) this.noReplicaUntil = Date.now() + REPLICA_RETRY_MS;
      }
      return -1;
    } catch (error) {
      this.logger.pino.warn(
        { err: error, records: batchSize },
        'usage batch not confirmed by its master; will write it again',
      );
      return 0;
    }
  }

  private retryLater(): void {
    if (this.retryTimer) return;
    this.retryTimer = setTimeout(() => {
      this.retryTimer = undefined;
      this.schedule();
    }, RETRY_MS);
    this.retryTimer.unref();
  }

  /** Shutdown waits (bounded) for the buffer to reach Redis; what cannot is logged, record by record. */
  async beforeApplicationShutdown(): Promise<void> {
    const deadline = Date.now() + SHUTDOWN_FLUSH_MS;
    while (this.queue.length > 0 && Date.now() < deadline) {
      if (!this.flushing) {
        this.flushing = true;
        await this.flush();
      }
      if (this.queue.length > 0) await new Promise((resolve) => setTimeout(resolve, 50));
    }
    if (this.retryTimer) clearTimeout(this.retryTimer);
    for (const pending of this.queue) {
      this.logger.pino.error({ record: pending.record }, 'usage record not written before shutdown');
      tell(pending, 'dropped');
    }
  }
}

/** Tells a record's waiter how its write went, once (a batch retried whole after it was written tells nobody again). */
function tell(pending: PendingUsage, result: WriteResult): void {
  const waiter = pending.onWritten;
  pending.onWritten = undefined;
  waiter?.(result);
}

/**
 * The days other than `day` (yyyy-mm-dd, UTC, the record's) where a survivor's estimate of a request admitted at
 * `admittedAt` and written `now` can have been counted: from the day it was admitted (at most ESTIMATE_DAYS_BACK
 * before) to today. Days after the record's count too: a record accounted just before midnight can wait in the
 * buffer (Redis out of reach) while a survivor records the request as lost after midnight.
 */
function estimateDays(day: string, admittedAt: number | undefined, now: number): string[] {
  if (admittedAt === undefined) return [];
  const today = new Date(now).toISOString().slice(0, 10);
  const admittedOn = new Date(admittedAt).toISOString().slice(0, 10);
  if (admittedOn >= day && today <= day) return []; // the common case: admitted, ended and written the same day
  const days: string[] = [];
  const last = Date.parse(`${today > day ? today : day}T00:00:00Z`);
  const first = Math.max(Date.parse(`${admittedOn}T00:00:00Z`), last - ESTIMATE_DAYS_BACK * 86_400_000);
  for (let at = first; at <= last; at += 86_400_000) {
    const other = new Date(at).toISOString().slice(0, 10);
    if (other !== day) days.push(other);
  }
  return days;
}

/** Redis' own refusals start with ERR/WRONGTYPE; anything else (closed, timed out, LOADING, ...) is worth a retry. */
function isConnectionError(error: Error): boolean {
  return !/^(ERR|WRONGTYPE)\b/.test(error.message);
}
