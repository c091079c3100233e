import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import Redis, { Cluster } from 'ioredis';
import { stopChild } from './gateway-process';
import { freePorts } from './free-port';
import { persistenceArgs } from './redis-server';

const run = promisify(execFile);

/**
 * A real Redis Cluster of three masters with one replica each, on private ports: six `redis-server
 * --cluster-enabled yes` processes joined by `redis-cli --cluster create` (the machine's own binaries).
 */
export class PrivateRedisCluster {
  // Ports the kernel says are free (redis-server cannot listen on 0 and report its port); each node's cluster bus
  // gets a free port of its own (--cluster-port) rather than its port + 10000. One taken in the meantime makes
  // its node exit, and start() picks six new pairs.
  ports: number[] = [];
  private readonly busPorts = new Map<number, number>();
  private readonly dir = mkdtempSync(join(tmpdir(), 'switchyard-cluster-'));
  private readonly children = new Map<number, ChildProcess>();

  get nodes(): string[] {
    return this.ports.map((port) => `127.0.0.1:${port}`);
  }

  async start(): Promise<void> {
    for (let attempt = 1; ; attempt++) {
      await this.pickPorts();
      for (const port of this.ports) this.startNode(port);
      const started = await Promise.all(this.ports.map((port) => this.waitForNode(port)));
      if (started.every(Boolean)) break;
      // A port was taken (the node exited): start all six again elsewhere.
      await Promise.all([...this.children.values()].map((child) => stopChild(child)));
      this.children.clear();
      if (attempt === 3) throw new Error('could not start the cluster nodes on free ports');
    }
    await run(
      'redis-cli',
      ['--cluster', 'create', ...this.nodes, '--cluster-replicas', '1', '--cluster-yes'],
      { timeout: 60_000 },
    );
    await this.waitUntilHealthy();
    await this.waitForReplicas();
  }

  /** Every replica has synced with its master: one that never has is not eligible for promotion. */
  async waitForReplicas(timeoutMs = 30_000): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const replication = await Promise.all(
        [...this.children.keys()].map((port) =>
          run('redis-cli', ['-p', String(port), 'info', 'replication'], { timeout: 2000 }).then(
            (r) => r.stdout,
            () => '',
          ),
        ),
      );
      const replicas = replication.filter((text) => text.includes('role:slave'));
      if (replicas.length === 3 && replicas.every((text) => text.includes('master_link_status:up'))) return;
      if (Date.now() > deadline) throw new Error('the replicas did not sync with their masters');
      await new Promise((r) => setTimeout(r, 100));
    }
  }

  /** Every node says cluster_state:ok and a client can write to every slot owner. */
  async waitUntilHealthy(timeoutMs = 30_000): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const states = await Promise.all([...this.children.keys()].map((port) => info(port).catch(() => '')));
      if (states.every((state) => state.includes('cluster_state:ok'))) return;
      if (Date.now() > deadline)
        throw new Error(
          `cluster not healthy: ${states.map((s) => /cluster_state:\w+/.exec(s)?.[0]).join(' ')}`,
        );
      await new Promise((r) => setTimeout(r, 200));
    }
  }

  /** Waits until a surviving node names a new master for `key`'s slot, and the cluster is healthy again. */
  async waitForPromotion(key: string, oldMaster: number, timeoutMs = 30_000): Promise<number> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const master = await this.masterOf(key).catch(() => oldMaster);
      if (master !== oldMaster) {
        await this.waitUntilHealthy(Math.max(1000, deadline - Date.now()));
        return master;
      }
      if (Date.now() > deadline) throw new Error(`no replica of ${oldMaster} was promoted`);
      await new Promise((r) => setTimeout(r, 100));
    }
  }

  /** The port of the master that serves `key`'s slot (as a live node sees it). */
  async masterOf(key: string): Promise<number> {
    const probe = new Redis([...this.children.keys()][0], '127.0.0.1', { lazyConnect: true });
    await probe.connect();
    const slot = (await probe.call('CLUSTER', 'KEYSLOT', key)) as number;
    const slots = (await probe.call('CLUSTER', 'SLOTS')) as Array<[number, number, [string, number]]>;
    probe.disconnect();
    return slots.find(([from, to]) => slot >= from && slot <= to)![2][1];
  }

  /** The port of `master`'s replica. */
  async replicaOf(master: number): Promise<number> {
    for (const port of this.children.keys()) {
      const text = (await run('redis-cli', ['-p', String(port), 'info', 'replication'], { timeout: 2000 }))
        .stdout;
      if (text.includes('role:slave') && text.includes(`master_port:${master}`)) return port;
    }
    throw new Error(`${master} has no replica`);
  }

  /** Freezes a node (SIGSTOP) or lets it go on (SIGCONT): a replica that stops acknowledging, without a failover. */
  freeze(port: number, frozen: boolean): void {
    this.children.get(port)?.kill(frozen ? 'SIGSTOP' : 'SIGCONT');
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

  /** True once the node answers PONG; false if its process exited first (its port was taken). */
  private async waitForNode(port: number): Promise<boolean> {
    const child = this.children.get(port)!;
    for (let i = 0; i < 400; i++) {
      if (child.exitCode !== null || child.signalCode !== null) return false;
      const pong = await run('redis-cli', ['-p', String(port), 'ping'], { timeout: 2000 }).then(
        (r) => r.stdout.trim(),
        () => '',
      );
      if (pong === 'PONG') return true;
      await new Promise((r) => setTimeout(r, 25));
    }
    throw new Error(`redis-server on ${port} did not start`);
  }

  private async pickPorts(): Promise<void> {
    const ports = await freePorts(12);
    this.ports = ports.slice(0, 6);
    this.busPorts.clear();
    this.ports.forEach((port, i) => this.busPorts.set(port, ports[6 + i]));
  }

  private startNode(port: number): void {
    const child = spawn(
      'redis-server',
      [
        '--port',
        String(port),
        '--bind',
        '127.0.0.1',
        '--cluster-enabled',
        'yes',
        '--cluster-port',
        String(this.busPorts.get(port)),
        '--cluster-config-file',
        join(this.dir, `nodes-${port}.conf`),
        '--cluster-node-timeout',
        '1000',
        '--repl-diskless-sync-delay',
        '0',
        ...persistenceArgs(this.dir, port),
      ],
      { stdio: 'ignore' },
    );
    this.children.set(port, child);
  }
}

async function info(port: number): Promise<string> {
  return (await run('redis-cli', ['-p', String(port), 'cluster', 'info'], { timeout: 2000 })).stdout;
}
