import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { chownSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client } from 'pg';
import { freePort } from './free-port';

/** Debian's PostgreSQL 15 (the `postgresql-15` package), used when nothing answers on the machine's port. */
const BIN = '/usr/lib/postgresql/15/bin';
/** The machine's server (CI and dev machines run one, trust auth); PG_TEST_PORT moves it (e.g. to test the fallback). */
const HOST = '127.0.0.1';
const PORT = Number(process.env.PG_TEST_PORT ?? 5432);

export interface TestDatabase {
  /** postgres://postgres@127.0.0.1:<port>/sy_test_<hex> */
  url: string;
  /** Whether it lives on a private server this process started (stopped by `drop`). */
  privateServer: boolean;
  /** Drops the database (and stops the private server, if any). */
  drop(): Promise<void>;
}

async function answers(port: number): Promise<boolean> {
  const client = new Client({
    host: HOST,
    port,
    user: 'postgres',
    database: 'postgres',
    connectionTimeoutMillis: 2000,
  });
  client.on('error', () => {});
  try {
    await client.connect();
    await client.query('SELECT 1');
    return true;
  } catch {
    return false;
  } finally {
    await client.end().catch(() => {});
  }
}

/**
 * A private server: initdb into a temporary directory and pg_ctl start on a port the kernel says is free, trust
 * auth, listening on 127.0.0.1 only (its socket in the data directory), fsync off (a test's data need not survive a
 * crash). initdb and postgres refuse to run as root, so as root they run as the `postgres` OS user.
 */
function startPrivateServer(port: number): { stop(): void } {
  const dir = mkdtempSync(join(tmpdir(), 'switchyard-pg-'));
  const asRoot = process.getuid?.() === 0;
  if (asRoot) {
    const uid = Number(execFileSync('id', ['-u', 'postgres']).toString());
    const gid = Number(execFileSync('id', ['-g', 'postgres']).toString());
    chownSync(dir, uid, gid);
  }
  const run = (binary: string, args: string[]) =>
    asRoot
      ? execFileSync('runuser', ['-u', 'postgres', '--', join(BIN, binary), ...args], { stdio: 'pipe' })
      : execFileSync(join(BIN, binary), args, { stdio: 'pipe' });
  const data = join(dir, 'data');
  run('initdb', [
    '-D',
    data,
    '-U',
    'postgres',
    '--auth=trust',
    '-E',
    'UTF8',
    '--no-sync',
    '--no-instructions',
  ]);
  const options = `-p ${port} -k ${dir} -c listen_addresses=${HOST} -c fsync=off -c synchronous_commit=off`;
  run('pg_ctl', ['-D', data, '-o', options, '-l', join(dir, 'server.log'), '-w', '-t', '30', 'start']);
  return {
    stop() {
      try {
        run('pg_ctl', ['-D', data, '-m', 'immediate', '-w', 'stop']);
      } finally {
        rmSync(dir, { recursive: true, force: true });
      }
    },
  };
}

/**
 * A database of its own for one spec file: `sy_test_<random hex>` on the machine's PostgreSQL (127.0.0.1:5432,
 * user postgres, trust), or on a private server started for it when nothing answers there.
 */
export async function startTestDatabase(): Promise<TestDatabase> {
  let port = PORT;
  let server: { stop(): void } | undefined;
  if (!(await answers(port))) {
    port = await freePort();
    server = startPrivateServer(port);
  }
  const name = `sy_test_${randomBytes(6).toString('hex')}`;
  const admin = async (sql: string) => {
    const client = new Client({ host: HOST, port, user: 'postgres', database: 'postgres' });
    client.on('error', () => {});
    await client.connect();
    try {
      await client.query(sql);
    } finally {
      await client.end();
    }
  };
  await admin(`CREATE DATABASE ${name}`);
  return {
    url: `postgres://postgres@${HOST}:${port}/${name}`,
    privateServer: server !== undefined,
    async drop() {
      try {
        await admin(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
      } finally {
        server?.stop();
      }
    },
  };
}
