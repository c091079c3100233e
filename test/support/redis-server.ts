import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freePort } from './free-port';
import { stopChild } from './gateway-process';
import Redis from 'ioredis';

/**
 * Persistence of one of several redis-servers sharing the directory `dir`: AOF on (an acknowledged write survives
 * a kill), no RDB snapshots, each server's files named by its port.
 */
export function persistenceArgs(dir: string, port: number): string[] {
  return [
    '--dir',
    dir,
    '--dbfilename',
    `dump-${port}.rdb`,
    '--appendonly',
    'yes',
    '--appendfilename',
    `aof-${port}.aof`,
    '--appenddirname',
    `aof-${port}`,
    '--save',
    '',
  ];
}

/**
 * A private redis-server (the machine's binary) on its own port and data directory,
 * with AOF persistence, that a test can stop and start again like an operator would.
 */
export class PrivateRedis {
  /** Chosen at the first start and kept, so a restart comes back where the gateway expects it. */
  port = 0;
  readonly dir = mkdtempSync(join(tmpdir(), 'switchyard-redis-'));
  private child?: ChildProcess;

  get url(): string {
    return `redis://127.0.0.1:${this.port}`;
  }

  async start(): Promise<void> {
    if (!this.port) this.port = await freePort();
    this.child = spawn(
      'redis-server',
      [
        '--port',
        String(this.port),
        '--bind',
        '127.0.0.1',
        '--dir',
        this.dir,
        '--appendonly',
        'yes',
        '--save',
        '',
      ],
      { stdio: 'ignore' },
    );
    const probe = new Redis(this.url, {
      lazyConnect: true,
      retryStrategy: () => null,
      maxRetriesPerRequest: 0,
    });
    for (let i = 0; i < 200; i++) {
      try {
        await probe.connect();
        await probe.ping();
        probe.disconnect();
        return;
      } catch {
        await new Promise((r) => setTimeout(r, 25));
      }
    }
    throw new Error(`redis-server on ${this.port} did not start`);
  }

  /** SIGTERM: Redis flushes its AOF and exits, as on a normal restart. */
  async stop(): Promise<void> {
    await stopChild(this.child);
  }
}
