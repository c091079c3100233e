import type { Pool, PoolClient } from 'pg';

/** A schema name, quoted for SQL. The config only takes lower-case identifiers (RequestLogPostgresConfig.schema). */
export function quoteIdent(name: string): string {
  return `"${name.replaceAll('"', '""')}"`;
}

/**
 * Serialises the store's DDL on one schema across replicas: migrations and partition maintenance take this
 * transaction-level advisory lock first, so two replicas starting (or expiring) together never race on a
 * `CREATE ... IF NOT EXISTS` (which is not safe against a concurrent create) or a migration.
 */
export async function lockSchema(client: PoolClient, schema: string): Promise<void> {
  await client.query("SELECT pg_advisory_xact_lock(hashtext('switchyard.request_log.ddl:' || $1))", [schema]);
}

/** Runs `work` in a transaction on one client of the pool; rolls back on failure and returns the client. */
export async function inTransaction<T>(pool: Pool, work: (client: PoolClient) => Promise<T>): Promise<T> {
  const client = await pool.connect();
  try {
    await client.query('BEGIN');
    const result = await work(client);
    await client.query('COMMIT');
    client.release();
    return result;
  } catch (error) {
    // A failed ROLLBACK means the connection is gone: release(error) destroys it rather than pooling it.
    await client.query('ROLLBACK').then(
      () => client.release(),
      (rollbackError: Error) => client.release(rollbackError),
    );
    throw error;
  }
}

/** One step of the schema: its number (the order, never reused) and its SQL for a quoted schema name. */
export interface Migration {
  version: number;
  name: string;
  sql: (schema: string) => string;
}

/**
 * The steps, in order; a released step is never edited (a new one is added). Metadata and content are apart, each
 * partitioned by day on `at` (partitions come from postgres-partitions.ts), so each has its own retention, expired
 * by dropping whole partitions. The primary key (at, id) includes the partition key, as PostgreSQL requires; scanned
 * backwards it serves the unfiltered newest-first query and its keyset (`(at, id) < cursor`). The other indexes serve
 * the filters: team (the team API and most admin queries), model asked for and model served, failures (the status
 * filter is almost always an error: a partial index keeps the 2xx majority out), trace id, and id alone (`get`).
 * Endpoint has no index: four values, read as a filter over the team's or the time range's rows. Ids are
 * `COLLATE "C"` (byte order): entries of one millisecond page in the same order whatever the server's locale.
 * Content is `json`, not `jsonb`: it is only ever read back whole, `json` keeps the body as the client wrote it (key
 * order, duplicate keys) and accepts the `\u0000` escapes `jsonb` refuses, which would fail a whole batch.
 */
export const MIGRATIONS: readonly Migration[] = [
  {
    version: 1,
    name: 'request_log and request_log_content, partitioned by day',
    sql: (s) => `
      CREATE TABLE ${s}.request_log (
        id text COLLATE "C" NOT NULL,
        at timestamptz NOT NULL,
        request_id text NOT NULL,
        team text NOT NULL,
        token_id text NOT NULL,
        token_name text,
        person_subject text,
        person_email text,
        endpoint text NOT NULL,
        stream boolean NOT NULL,
        model text NOT NULL,
        served_model text NOT NULL,
        deployment text,
        attempts jsonb NOT NULL,
        status integer NOT NULL,
        outcome text NOT NULL,
        error_code text,
        latency_ms double precision NOT NULL,
        ttfb_ms double precision,
        prompt_tokens integer NOT NULL,
        completion_tokens integer NOT NULL,
        reasoning_tokens integer NOT NULL,
        cached_tokens integer NOT NULL,
        cache_write_tokens integer NOT NULL,
        cache_write_1h_tokens integer NOT NULL,
        estimated boolean NOT NULL,
        cost_nanos bigint,
        trace_id text,
        client_address text,
        content_kept boolean NOT NULL,
        PRIMARY KEY (at, id)
      ) PARTITION BY RANGE (at);
      CREATE INDEX request_log_team ON ${s}.request_log (team, at DESC, id DESC);
      CREATE INDEX request_log_model ON ${s}.request_log (model, at DESC, id DESC);
      CREATE INDEX request_log_served_model ON ${s}.request_log (served_model, at DESC, id DESC);
      CREATE INDEX request_log_failed ON ${s}.request_log (status, at DESC, id DESC) WHERE status >= 400;
      CREATE INDEX request_log_trace ON ${s}.request_log (trace_id) WHERE trace_id IS NOT NULL;
      CREATE INDEX request_log_id ON ${s}.request_log (id);
      CREATE TABLE ${s}.request_log_content (
        id text COLLATE "C" NOT NULL,
        at timestamptz NOT NULL,
        team text NOT NULL,
        request json NOT NULL,
        response json,
        PRIMARY KEY (at, id)
      ) PARTITION BY RANGE (at);`,
  },
  {
    version: 2,
    name: 'request_log.cache_hit: whether the response cache answered',
    // On the partitioned parent: PostgreSQL adds the column to every partition, made or to be made.
    sql: (s) => `ALTER TABLE ${s}.request_log ADD COLUMN cache_hit boolean NOT NULL DEFAULT false;`,
  },
];

/**
 * Brings `schema` up to the last migration: creates the schema and `<schema>.schema_migrations` when missing, then
 * applies each step not recorded there, each in its own transaction under the schema's advisory lock (a replica
 * that waited for another finds the step recorded and skips it). Run by the store before its first use and by
 * `switchyard db migrate`. Returns the versions it applied (none when the schema was current).
 */
export async function migrate(pool: Pool, schema: string, steps = MIGRATIONS): Promise<number[]> {
  const s = quoteIdent(schema);
  const applied: number[] = [];
  for (const step of steps) {
    const ran = await inTransaction(pool, async (client) => {
      await lockSchema(client, schema);
      await client.query(`CREATE SCHEMA IF NOT EXISTS ${s}`);
      await client.query(
        `CREATE TABLE IF NOT EXISTS ${s}.schema_migrations
           (version integer PRIMARY KEY, name text NOT NULL, applied_at timestamptz NOT NULL DEFAULT now())`,
      );
      const done = await client.query(`SELECT 1 FROM ${s}.schema_migrations WHERE version = $1`, [
        step.version,
      ]);
      if (done.rowCount) return false;
      await client.query(step.sql(s));
      await client.query(`INSERT INTO ${s}.schema_migrations (version, name) VALUES ($1, $2)`, [
        step.version,
        step.name,
      ]);
      return true;
    });
    if (ran) applied.push(step.version);
  }
  return applied;
}
