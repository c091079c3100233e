// A Redis Cluster for the topology scenario of `npm run bench`: three masters with a replica each, on private
// ports, from the machine's own redis-server and redis-cli (as the e2e tests do), no persistence.
import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { promisify } from 'node:util';
import { spawnTracked } from './processes.mjs';

const run = promisify(execFile);
const cli = (port, ...args) =>
  run('redis-cli', ['-p', String(port), ...args], { timeout: 2000 }).then(
    (r) => r.stdout,
    () => '',
  );

/** Resolves with the nodes (`host:port`) and the servers' pids once every node reports cluster_state:ok. */
export async function startRedisCluster(dir) {
  // Below the ephemeral port range (where an outgoing socket can hold a port); bus ports are +10000.
  const base = 11000 + Math.floor(Math.random() * 1000) * 6;
  const ports = Array.from({ length: 6 }, (_, i) => base + i);
  const children = ports.map((port) =>
    spawnTracked('redis-server', [
      '--port',
      String(port),
      '--bind',
      '127.0.0.1',
      '--cluster-enabled',
      'yes',
      '--cluster-config-file',
      `${dir}/nodes-${port}.conf`,
      '--dir',
      dir,
      '--save',
      '',
      '--appendonly',
      'no',
    ]),
  );
  for (const port of ports)
    await until(async () => (await cli(port, 'ping')).trim() === 'PONG', `redis-server on ${port}`);
  const nodes = ports.map((port) => `127.0.0.1:${port}`);
  await run('redis-cli', ['--cluster', 'create', ...nodes, '--cluster-replicas', '1', '--cluster-yes'], {
    timeout: 60_000,
  });
  for (const port of ports)
    await until(
      async () => (await cli(port, 'cluster', 'info')).includes('cluster_state:ok'),
      `cluster state on ${port}`,
    );
  return { nodes, pids: children.map((child) => child.pid) };
}

/** The pid of the Redis server at 127.0.0.1:`port` (to count its CPU), or undefined if it is not ours to see. */
export async function redisPid(port) {
  const pid = Number(/process_id:(\d+)/.exec(await cli(port, 'info', 'server'))?.[1]);
  return Number.isFinite(pid) && existsSync(`/proc/${pid}/stat`) ? pid : undefined;
}

async function until(condition, what) {
  for (let i = 0; i < 400; i++) {
    if (await condition()) return;
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error(`timed out waiting for ${what}`);
}
