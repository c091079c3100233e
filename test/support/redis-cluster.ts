import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import Redis, { Cluster } from 'ioredis';
import { stopChild } from './gateway-process';

const run = promisify(execFile);

/**
 * A real Redis Cluster of three masters with one replica each, on private ports: six `redis-server
 * --cluster-enabled yes` processes joined by `redis-cli --cluster create` (the machine's own binaries).
 */
export class PrivateRedisCluster {
  // 50000-55000, cluster bus ports (+10000) 60000-65000: apart from PrivateRedis's 30000-49999, since both run at once.
  readonly base = 50000 + Math.floor(Math.random() * 830) * 6;
  readonly ports = Array.from({ length: 6 }, (_, i) => this.base + i);
  private readonly dir = mkdtempSync(join(tmpdir(), 'switchyard-cluster-'));
  private readonly children = new Map<number, ChildProcess>();

  get nodes(): string[] {
    return this.ports.map((port) => `127.0.0.1:${port}`);
  }

  async start(): Promise<void> {
    for (const port of this.ports) this.startNode(port);
    for (const port of this.ports) await waitForPing(port);
    await run('redis-cli', ['--cluster', 'create', ...this.nodes, '--cluster-replicas', '1', '--cluster-yes'], { timeout: 60_000 });
    await this.waitUntilHealthy();
  }

  /** Every node says cluster_state:ok and a client can write to every slot owner. */
  async waitUntilHealthy(timeoutMs = 30_000): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const states = await Promise.all([...this.children.keys()].map((port) => info(port).catch(() => '')));
      if (states.every((state) => state.includes('cluster_state:ok'))) return;
      if (Date.now() > deadline) throw new Error(`cluster not healthy: ${states.map((s) => /cluster_state:\w+/.exec(s)?.[0]).join(' ')}`);
      await new Promise((r) => setTimeout(r, 200));
    }
  }

  /** The port of the master that serves `key`'s slot. */
  async masterOf(key: string): Promise<number> {
    const probe = new Redis(this.ports[0], '127.0.0.1', { lazyConnect: true });
    await probe.connect();
    const slot = (await probe.call('CLUSTER', 'KEYSLOT', key)) as number;
    const slots = (await probe.call('CLUSTER', 'SLOTS')) as Array<[number, number, [string, number]]>;
    probe.disconnect();
    return slots.find(([from, to]) => slot >= from && slot <= to)![2][1];
  }

  /** Kills a node (SIGKILL: a crash), so its replica is promoted. */
  kill(port: number): void {
    this.children.get(port)?.kill('SIGKILL');
    this.children.delete(port);
  }

  client(): Cluster {
    return new Cluster(this.nodes.map((node) => ({ host: '127.0.0.1', port: Number(node.split(':')[1]) })));
  }

  async stop(): Promise<void> {
    await Promise.all([...this.children.values()].map((child) => stopChild(child)));
    rmSync(this.dir, { recursive: true, force: true });
  }

  private startNode(port: number): void {
    const child = spawn(
      'redis-server',
      ['--port', String(port), '--bind', '127.0.0.1', '--cluster-enabled', 'yes', '--cluster-config-file', join(this.dir, `nodes-${port}.conf`), '--cluster-node-timeout', '1000', '--dir', this.dir, '--dbfilename', `dump-${port}.rdb`, '--appendonly', 'yes', '--appendfilename', `aof-${port}.aof`, '--appenddirname', `aof-${port}`, '--save', ''],
      { stdio: 'ignore' },
    );
    this.children.set(port, child);
  }
}

async function waitForPing(port: number): Promise<void> {
  for (let i = 0; i < 200; i++) {
    try {
      await run('redis-cli', ['-p', String(port), 'ping'], { timeout: 2000 });
      return;
    } catch {
      await new Promise((r) => setTimeout(r, 25));
    }
  }
  throw new Error(`redis-server on ${port} did not start`);
}

async function info(port: number): Promise<string> {
  return (await run('redis-cli', ['-p', String(port), 'cluster', 'info'], { timeout: 2000 })).stdout;
}
