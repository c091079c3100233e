import type { Pool } from 'pg';
import { inTransaction, lockSchema, quoteIdent } from './postgres-migrations';

const DAY_MS = 86_400_000;

/** The partitioned tables, each with the retention that applies to it. */
export const PARTITIONED_TABLES = ['request_log', 'request_log_content'] as const;
export type PartitionedTable = (typeof PARTITIONED_TABLES)[number];

/** The UTC day an instant falls on, as `YYYYMMDD` (a partition's suffix). */
export function dayOf(at: Date | string): string {
  return new Date(at).toISOString().slice(0, 10).replaceAll('-', '');
}

/** `request_log_p20261127`: the partition of `table` holding the UTC day `day` (YYYYMMDD). */
export function partitionName(table: PartitionedTable, day: string): string {
  return `${table}_p${day}`;
}

/** The first instant of a `YYYYMMDD` day (UTC), in milliseconds. */
function dayStart(day: string): number {
  return Date.UTC(Number(day.slice(0, 4)), Number(day.slice(4, 6)) - 1, Number(day.slice(6, 8)));
}

/** Today (UTC, at `now`) and the `ahead` days after it. */
export function comingDays(now: Date, ahead: number): string[] {
  return Array.from({ length: ahead + 1 }, (_, i) => dayOf(new Date(now.getTime() + i * DAY_MS)));
}

/**
 * DDL waits at most this long for its locks: creating or dropping a partition locks the parent table, and a
 * maintenance run stuck behind a long read would hold up every write queued behind it. It fails instead, and the
 * next run (or the next write needing the partition) tries again.
 */
const DDL_LOCK_TIMEOUT = "SET LOCAL lock_timeout = '5s'";

/** Creates the partitions of both tables for `days` (YYYYMMDD) that are missing, in one transaction. */
export async function ensurePartitions(pool: Pool, schema: string, days: Iterable<string>): Promise<void> {
  const s = quoteIdent(schema);
  const unique = [...new Set(days)].filter((day) => /^\d{8}$/.test(day));
  if (unique.length === 0) return;
  await inTransaction(pool, async (client) => {
    await lockSchema(client, schema);
    await client.query(DDL_LOCK_TIMEOUT);
    for (const day of unique) {
      const from = new Date(dayStart(day)).toISOString();
      const to = new Date(dayStart(day) + DAY_MS).toISOString();
      for (const table of PARTITIONED_TABLES)
        await client.query(
          `CREATE TABLE IF NOT EXISTS ${s}.${quoteIdent(partitionName(table, day))}
             PARTITION OF ${s}.${table} FOR VALUES FROM ('${from}') TO ('${to}')`,
        );
    }
  });
}

/** The day partitions of `table` (names and days), from the catalogue. */
export async function partitionsOf(
  pool: Pool,
  schema: string,
  table: PartitionedTable,
): Promise<{ name: string; day: string }[]> {
  const { rows } = await pool.query<{ name: string }>(
    `SELECT child.relname AS name
       FROM pg_inherits
       JOIN pg_class parent ON parent.oid = pg_inherits.inhparent
       JOIN pg_class child ON child.oid = pg_inherits.inhrelid
       JOIN pg_namespace ns ON ns.oid = parent.relnamespace
      WHERE ns.nspname = $1 AND parent.relname = $2`,
    [schema, table],
  );
  const pattern = new RegExp(`^${table}_p(\\d{8})$`);
  return rows.flatMap(({ name }) => {
    const day = pattern.exec(name)?.[1];
    return day ? [{ name, day }] : [];
  });
}

/**
 * Drops the partitions of each table whose whole day is past its retention (`days` before `now`): a day's
 * partition goes once its last instant is older than that, so an entry is kept at least its retention and at most
 * a day more. Whole tables are dropped, never rows deleted: no dead tuples, no vacuum debt, no long transaction.
 */
export async function dropExpiredPartitions(
  pool: Pool,
  schema: string,
  now: Date,
  retentionDays: Record<PartitionedTable, number>,
): Promise<string[]> {
  const expired: string[] = [];
  for (const table of PARTITIONED_TABLES) {
    const cutoff = now.getTime() - retentionDays[table] * DAY_MS;
    for (const partition of await partitionsOf(pool, schema, table))
      if (dayStart(partition.day) + DAY_MS <= cutoff) expired.push(partition.name);
  }
  if (expired.length === 0) return expired;
  const s = quoteIdent(schema);
  await inTransaction(pool, async (client) => {
    await lockSchema(client, schema);
    await client.query(DDL_LOCK_TIMEOUT);
    await client.query(
      `DROP TABLE IF EXISTS ${expired.map((name) => `${s}.${quoteIdent(name)}`).join(', ')}`,
    );
  });
  return expired;
}
