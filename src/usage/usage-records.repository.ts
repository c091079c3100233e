import type { CounterId } from '../limits/limit-counters.repository';
import type { UsageRecord } from './usage-record';

/** The Nest injection token of the UsageRecords repository (Redis in production, in memory in unit tests). */
export const USAGE_RECORDS = Symbol('UsageRecords');

/** One record to write, with what it settles and releases. */
export interface RecordToWrite {
  record: UsageRecord;
  /** Limit counters and the delta that turns each one's reservation into the real count (limits.service.ts). */
  settle: { keys: CounterId[]; deltas: number[] };
  /** Concurrency lease sets the request is in (released). */
  concurrencyKeys: CounterId[];
  /** A survivor's estimate of a request whose replica was lost: the request's own record replaces it if it comes. */
  estimate: boolean;
  /** Days other than the record's whose counters may hold an estimate of this request (usage-writer.ts). */
  otherDays: string[];
}

/**
 * How a record's write went: `replaced-estimate` when it took the place of a survivor's estimate that no replica
 * had counted in its metrics yet, `replaced-counted-estimate` when one had (those metrics keep the estimate).
 */
export type Stored = 'written' | 'duplicate' | 'replaced-estimate' | 'replaced-counted-estimate';

/**
 * Whether a survivor counts its estimate in its metrics now (`count`: and no other replica will), not at all
 * (`skip`: replaced by the real record, or counted already), or not yet (`missing`: not written yet, or expired).
 */
export type EstimateCount = 'count' | 'skip' | 'missing';

/**
 * Usage records and the per-day counters they add to, written exactly once per request: a record retried after a
 * dropped connection, or written again by another writer, is not counted twice (its marker says it was written).
 */
export interface UsageRecords {
  /** False while records cannot be written: the writer keeps them in its buffer. */
  readonly writable: boolean;
  /** Called each time writing becomes possible again (the writer flushes its buffer). */
  onWritable(listener: () => void): void;
  /** Writes each record (sent together); each answers on its own: how it was stored, or why not. */
  write(records: RecordToWrite[], now: number): Promise<Array<Stored | Error>>;
  /**
   * After a batch: true once `replicas` replicas of every master written to hold it, false when one timed out;
   * rejects when a master could not be asked (the caller writes the batch again).
   */
  replicated(replicas: number, timeoutMs: number): Promise<boolean>;
  /** True when a master has no replica connected at all (waiting for one can only time out). */
  aMasterHasNoReplica(): Promise<boolean>;
  /** Lets one replica, once, count a survivor's estimate in its metrics. */
  countEstimate(team: string, recordId: string): Promise<EstimateCount>;
  /** Each team's counters for each day (field -> value), teams and days in the order asked. */
  dayCounters(teams: string[], days: string[]): Promise<Array<Array<Record<string, string>>>>;
  /** A team's newest records first, `end` as an XREVRANGE end (`+`, or `(id` to page), as [entry id, fields]. */
  records(team: string, end: string, limit: number): Promise<Array<[string, string[]]>>;
}
