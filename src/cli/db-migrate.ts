import { Pool } from 'pg';
import type { GatewayConfig } from '../config/config.schema';
import { MIGRATIONS, migrate } from '../request-log/postgres/postgres-migrations';
import { poolConfig } from '../request-log/postgres/postgres-request-log.repository';

/**
 * `switchyard db migrate`: brings the request log's PostgreSQL schema (logging.requests.postgres) up to date, as
 * the gateway does before its first write; for operators who migrate before rolling out a version. Safe to run
 * beside running replicas: every step runs under the schema's advisory lock, and a step recorded is skipped.
 */
export async function migrateDatabase(config: GatewayConfig): Promise<void> {
  const postgres = config.logging.requests.postgres;
  if (!postgres.url)
    throw new Error('logging.requests.postgres.url is not set: there is no database to migrate');
  const pool = new Pool({ ...poolConfig(postgres), max: 1 });
  pool.on('error', () => {}); // an idle connection lost: the migration's own query fails and says why
  try {
    const applied = await migrate(pool, postgres.schema);
    const version = MIGRATIONS[MIGRATIONS.length - 1].version;
    process.stdout.write(`${JSON.stringify({ schema: postgres.schema, applied, version }, null, 2)}\n`);
  } finally {
    await pool.end();
  }
}
