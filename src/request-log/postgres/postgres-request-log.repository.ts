import { Pool, type PoolConfig } from 'pg';
import type { RequestLogRetentionConfig, RequestLogPostgresConfig } from '../../config/config.schema';
import type { RequestLogContent, RequestLogEntry, RequestLogRecord } from '../request-log-entry';
import type { RequestLogPage, RequestLogQuery, RequestLogStore } from '../request-log.repository';
import { migrate, quoteIdent } from './postgres-migrations';
import { comingDays, dayOf, dropExpiredPartitions, ensurePartitions } from './postgres-partitions';
import { decodeCursor, encodeCursor, InvalidCursorError } from '../request-log-query';
import {
  appendParameters,
  appendStatement,
  contentFromRow,
  entrySelect,
  entryFromRow,
  type EntryRow,
} from './postgres-rows';

/** Partitions are made this many days ahead of today, so a write near midnight never waits for one. */
const DAYS_AHEAD = 2;
/** PostgreSQL's "no partition of relation ... found for row" (SQLSTATE 23514, check_violation). */
function isNoPartition(error: unknown): boolean {
  const { code, message } = error as { code?: string; message?: string };
  return code === '23514' && message?.startsWith('no partition') === true;
}

export interface PostgresStoreOptions {
  postgres: RequestLogPostgresConfig;
  retentionDays: RequestLogRetentionConfig;
  /** Told once when the connection to PostgreSQL is lost (an idle connection failed) and once when it is back. */
  onConnection?: (state: 'lost' | 'restored', reason?: string) => void;
  /** The clock (tests move it). */
  now?: () => Date;
}

/** The pool's settings: every wait bounded, so an unreachable server fails a call rather than hanging it. */
export function poolConfig(postgres: RequestLogPostgresConfig): PoolConfig {
  return {
    connectionString: postgres.url,
    max: postgres.poolSize,
    connectionTimeoutMillis: 5_000,
    idleTimeoutMillis: 30_000,
    // The writer gives an append 10 s (request-log-writer.ts): a statement is not left running long after that.
    statement_timeout: 10_000,
    query_timeout: 12_000,
    idle_in_transaction_session_timeout: 60_000,
    keepAlive: true,
    application_name: 'switchyard',
  };
}

/**
 * The request log in PostgreSQL (logging.requests.store: postgres; docs/request-log.md): metadata in
 * `<schema>.request_log`, content apart in `<schema>.request_log_content`, both partitioned by UTC day on `at`
 * (postgres-migrations.ts has the tables and indexes). The schema is migrated, and the partitions of today and the
 * next two days made, before the store's first call (again after a failure: PostgreSQL down at start is not fatal,
 * each call rejects until it is back); `expire`, the maintenance run, drops what is past retention and makes the
 * coming days' partitions.
 *
 * A write for a day without a partition (maintenance failing for days, a replica's clock far off, a past day
 * written late) makes that day's partition and is tried again, rather than going to a DEFAULT partition: rows in a
 * default partition would block creating that day's partition later (PostgreSQL refuses a partition whose rows sit
 * in the default) and could only be expired row by row. A past day's partition made so goes at the next `expire`.
 *
 * Nothing here throws past its promise: the pool's 'error' events (an idle connection lost) are handled, and each
 * call rejects with the error for the caller (the writer) to count.
 */
export class PostgresRequestLogStore implements RequestLogStore {
  private readonly pool: Pool;
  private readonly schema: string;
  private readonly appendSql: string;
  private prepared?: Promise<void>;
  private down = false;

  constructor(private readonly options: PostgresStoreOptions) {
    this.pool = new Pool(poolConfig(options.postgres));
    this.schema = quoteIdent(options.postgres.schema);
    this.appendSql = appendStatement(this.schema);
    this.pool.on('error', (error: Error & { code?: string }) =>
      this.connection('lost', error.code ?? error.message),
    );
    this.pool.on('connect', () => this.connection('restored'));
  }

  /** Evicts nothing: this store has no size cap, only retention. */
  async append(records: readonly RequestLogRecord[]): Promise<{ evicted: number }> {
    if (records.length === 0) return { evicted: 0 };
    await this.prepare();
    const parameters = appendParameters(records);
    try {
      await this.pool.query(this.appendSql, parameters);
    } catch (error) {
      if (!isNoPartition(error)) throw error;
      await ensurePartitions(
        this.pool,
        this.options.postgres.schema,
        records.map(({ entry }) => dayOf(entry.at)),
      );
      await this.pool.query(this.appendSql, parameters);
    }
    return { evicted: 0 };
  }

  async query(query: RequestLogQuery): Promise<RequestLogPage> {
    const conditions: string[] = [];
    const values: unknown[] = [];
    const where = (condition: (parameter: string) => string, value: unknown) => {
      values.push(value);
      conditions.push(condition(`$${values.length}`));
    };
    if (query.team !== undefined) where((p) => `team = ${p}`, query.team);
    if (query.teams !== undefined) where((p) => `team = ANY(${p}::text[])`, [...query.teams]);
    if (query.model !== undefined) where((p) => `(model = ${p} OR served_model = ${p})`, query.model);
    if (query.status !== undefined) where((p) => `status = ${p}`, query.status);
    if (query.endpoint !== undefined) where((p) => `endpoint = ${p}`, query.endpoint);
    if (query.outcome !== undefined) where((p) => `outcome = ${p}`, query.outcome);
    if (query.from !== undefined) where((p) => `at >= ${p}::timestamptz`, query.from);
    if (query.to !== undefined) where((p) => `at < ${p}::timestamptz`, query.to);
    if (query.traceId !== undefined) where((p) => `trace_id = ${p}`, query.traceId);
    if (query.after !== undefined) {
      const cursor = decodeCursor(query.after); // InvalidCursorError for what no store of this log handed out
      if (Number.isNaN(new Date(cursor.at).getTime())) throw new InvalidCursorError(); // past the dates JS can hold
      values.push(new Date(cursor.at).toISOString(), cursor.id);
      const [at, id] = [`$${values.length - 1}::timestamptz`, `$${values.length}`];
      // Strictly older in (at, id) order; `at <=` alone lets the planner skip the newer partitions.
      conditions.push(`at <= ${at}`, `(at, id) < (${at}, ${id})`);
    }
    const limit = Number.isFinite(query.limit) ? Math.min(Math.max(Math.trunc(query.limit), 1), 1000) : 100;
    values.push(limit + 1); // one more than asked: whether there is a next page
    await this.prepare();
    const { rows } = await this.pool.query<EntryRow>(
      `SELECT ${entrySelect()} FROM ${this.schema}.request_log
        ${conditions.length ? `WHERE ${conditions.join(' AND ')}` : ''}
        ORDER BY at DESC, id DESC LIMIT $${values.length}`,
      values,
    );
    const entries = rows.slice(0, limit).map(entryFromRow);
    const last = entries[entries.length - 1];
    return {
      entries,
      next: rows.length > limit ? encodeCursor({ at: Date.parse(last.at), id: last.id }) : null,
    };
  }

  async get(id: string): Promise<{ entry: RequestLogEntry; content: RequestLogContent | null } | null> {
    await this.prepare();
    // An id alone has no `at`: found through the id index (across the partitions), its content by (at, id).
    const { rows } = await this.pool.query<
      EntryRow & { has_content: boolean; request: unknown; response: unknown }
    >(
      `SELECT ${entrySelect('l')}, c.id IS NOT NULL AS has_content, c.request, c.response
         FROM ${this.schema}.request_log l
         LEFT JOIN ${this.schema}.request_log_content c ON c.at = l.at AND c.id = l.id
        WHERE l.id = $1
        ORDER BY l.at DESC LIMIT 1`,
      [id],
    );
    const row = rows[0];
    if (!row) return null;
    return { entry: entryFromRow(row), content: row.has_content ? contentFromRow(row) : null };
  }

  /** Maintenance: drops the partitions past retention (whole tables, never rows) and makes the coming days'. */
  async expire(now: Date): Promise<void> {
    await this.prepare();
    await dropExpiredPartitions(this.pool, this.options.postgres.schema, now, {
      request_log: this.options.retentionDays.metadata,
      request_log_content: this.options.retentionDays.content,
    });
    await ensurePartitions(this.pool, this.options.postgres.schema, comingDays(now, DAYS_AHEAD));
  }

  async close(): Promise<void> {
    if (!this.pool.ended) await this.pool.end();
  }

  /** Migrates and makes the coming partitions once; a failure is forgotten, so the next call tries again. */
  private prepare(): Promise<void> {
    this.prepared ??= (async () => {
      await migrate(this.pool, this.options.postgres.schema);
      await ensurePartitions(this.pool, this.options.postgres.schema, comingDays(this.now(), DAYS_AHEAD));
    })().catch((error: unknown) => {
      this.prepared = undefined;
      throw error;
    });
    return this.prepared;
  }

  private now(): Date {
    return this.options.now?.() ?? new Date();
  }

  private connection(state: 'lost' | 'restored', reason?: string): void {
    if ((state === 'lost') === this.down) return; // still the same outage, or no outage
    this.down = state === 'lost';
    this.options.onConnection?.(state, reason);
  }
}
