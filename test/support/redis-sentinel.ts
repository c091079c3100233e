import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { freePorts } from './free-port';
import { stopChild } from './gateway-process';
import { persistenceArgs } from './redis-server';

const run = promisify(execFile);

/**
 * A Sentinel-managed Redis on private ports: a master, its replica and three sentinels (`redis-server --sentinel`,
 * quorum 2, a master is down after 1 s), from the machine's own binaries.
 */
export class PrivateRedisSentinel {
  readonly name = 'switchyard-test';
  // Ports the kernel says are free (redis-server cannot listen on 0 and report its port): master, replica, then
  // the three sentinels. One taken in the meantime makes its process exit, and start() picks five new ones.
  private ports: number[] = [];
  private readonly dir = mkdtempSync(join(tmpdir(), 'switchyard-sentinel-'));
  private readonly children = new Map<number, ChildProcess>();

  private get dataPorts(): number[] {
    return this.ports.slice(0, 2);
  }
  private get sentinelPorts(): number[] {
    return this.ports.slice(2, 5);
  }
  get sentinels(): string[] {
    return this.sentinelPorts.map((port) => `127.0.0.1:${port}`);
  }

  async start(): Promise<void> {
    for (let attempt = 1; ; attempt++) {
      this.ports = await freePorts(5);
      const [master, replica] = this.dataPorts;
      this.startServer(master, []);
      this.startServer(replica, ['--replicaof', '127.0.0.1', String(master)]);
      for (const port of this.sentinelPorts) this.startSentinel(port, master);
      const started = await Promise.all([...this.children.keys()].map((port) => this.waitForNode(port)));
      if (started.every(Boolean)) break;
      await Promise.all([...this.children.values()].map((child) => stopChild(child)));
      this.children.clear();
      if (attempt === 3) throw new Error('could not start the sentinel setup on free ports');
    }
    await this.waitFor(
      async () =>
        (await this.cli(this.dataPorts[1], 'info', 'replication')).includes('master_link_status:up'),
      'the replica to sync',
    );
    // Every sentinel knows the replica and the other sentinels, so it can vote and promote.
    for (const port of this.sentinelPorts) {
      await this.waitFor(async () => {
        const master = await this.cli(port, 'sentinel', 'master', this.name);
        return /num-slaves\n1\n/.test(master) && /num-other-sentinels\n2\n/.test(master);
      }, `sentinel ${port} to see the replica and its peers`);
    }
  }

  /** The port the sentinels name as the master now. */
  async masterPort(): Promise<number> {
    const [, port] = (await this.cli(this.sentinelPorts[0], 'sentinel', 'get-master-addr-by-name', this.name))
      .trim()
      .split('\n');
    return Number(port);
  }

  /** SIGKILLs the master and resolves with the promoted replica's port once the sentinels agree on it. */
  async killMaster(): Promise<number> {
    const old = await this.masterPort();
    this.children.get(old)?.kill('SIGKILL');
    this.children.delete(old);
    let promoted = old;
    await this.waitFor(
      async () => {
        promoted = await this.masterPort();
        return promoted !== old && (await this.cli(promoted, 'info', 'replication')).includes('role:master');
      },
      'a replica to be promoted',
      30_000,
    );
    return promoted;
  }

  async stop(): Promise<void> {
    await Promise.all([...this.children.values()].map((child) => stopChild(child)));
    rmSync(this.dir, { recursive: true, force: true });
  }

  private startServer(port: number, extra: string[]): void {
    const args = [
      '--port',
      String(port),
      '--bind',
      '127.0.0.1',
      ...persistenceArgs(this.dir, port),
      '--repl-diskless-sync-delay',
      '0',
      ...extra,
    ];
    this.children.set(port, spawn('redis-server', args, { stdio: 'ignore' }));
  }

  private startSentinel(port: number, master: number): void {
    // A sentinel rewrites its config file as it learns, so each gets its own.
    const config = join(this.dir, `sentinel-${port}.conf`);
    writeFileSync(
      config,
      [
        `port ${port}`,
        'bind 127.0.0.1',
        `dir ${this.dir}`,
        `sentinel monitor ${this.name} 127.0.0.1 ${master} 2`,
        `sentinel down-after-milliseconds ${this.name} 1000`,
        `sentinel failover-timeout ${this.name} 5000`,
        `sentinel parallel-syncs ${this.name} 1`,
        '',
      ].join('\n'),
    );
    this.children.set(port, spawn('redis-server', [config, '--sentinel'], { stdio: 'ignore' }));
  }

  /** True once the process answers PONG; false if it exited first (its port was taken). */
  private async waitForNode(port: number): Promise<boolean> {
    const child = this.children.get(port)!;
    for (let i = 0; i < 400; i++) {
      if (child.exitCode !== null || child.signalCode !== null) return false;
      if ((await this.cli(port, 'ping').catch(() => '')).trim() === 'PONG') return true;
      await new Promise((r) => setTimeout(r, 25));
    }
    throw new Error(`redis on ${port} did not start`);
  }

  private async waitFor(condition: () => Promise<boolean>, what: string, timeoutMs = 20_000): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    while (!(await condition().catch(() => false))) {
      if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
      await new Promise((r) => setTimeout(r, 100));
    }
  }

  private async cli(port: number, ...args: string[]): Promise<string> {
    return (await run('redis-cli', ['-p', String(port), ...args], { timeout: 2000 })).stdout;
  }
}
