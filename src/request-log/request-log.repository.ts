import type { RequestLogContent, RequestLogEntry, RequestLogRecord } from './request-log-entry';

/** Injection token of the request log's store (Redis by default, PostgreSQL with logging.requests.store). */
export const REQUEST_LOG_STORE = Symbol('RequestLogStore');

/** What a query of the log may filter on; every field narrows it. */
export interface RequestLogFilter {
  team?: string;
  /** Only these teams (a caller who may read some teams only, asking for all of theirs). */
  teams?: readonly string[];
  /** The model asked for, or the one that served it. */
  model?: string;
  /** The HTTP status the client got. */
  status?: number;
  endpoint?: string;
  /** How it ended: ok, error, aborted, rejected. */
  outcome?: string;
  /** From this instant (inclusive), ISO 8601. */
  from?: string;
  /** Up to this instant (exclusive), ISO 8601. */
  to?: string;
  traceId?: string;
}

export interface RequestLogQuery extends RequestLogFilter {
  /** At most this many entries (1-1000). */
  limit: number;
  /** The `next` cursor of the page before: entries older than it. */
  after?: string;
}

export interface RequestLogPage {
  /** Newest first. */
  entries: RequestLogEntry[];
  /** Pass as `after` for the next (older) page; null on the last page. */
  next: string | null;
}

/**
 * Where request log entries are kept. Writes come in batches from the RequestLogWriter only (never on a request's
 * path); each store expires metadata and content by their own retention, dropping whole keys or partitions.
 */
export interface RequestLogStore {
  /**
   * Keeps the batch (entries and, apart, the content of those that have it). Idempotent by entry id. Resolves with
   * how many entries older ones of the batch's teams made way for (a store with a size cap), 0 for the others.
   */
  append(records: readonly RequestLogRecord[]): Promise<{ evicted: number }>;
  /** Entries newest first, filtered and paged. */
  query(query: RequestLogQuery): Promise<RequestLogPage>;
  /** One entry with its content when still kept; null when unknown or expired. */
  get(id: string): Promise<{ entry: RequestLogEntry; content: RequestLogContent | null } | null>;
  /** Drops what is past retention (whole partitions or keys); run on a timer by the writer's owner. */
  expire(now: Date): Promise<void>;
  close(): Promise<void>;
}
