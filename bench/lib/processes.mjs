// Process plumbing shared by the benchmarks: start a server and wait for its ready line, read a process's
// CPU time and RSS from /proc, percentiles, and stop everything that was started.
import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { request } from 'undici';

const children = [];

/**
 * Runs `node <script>` (or `node ...argv` when script is an array) and resolves with its pid and URL once its
 * stdout matches `ready` (a port number or a URL in group 1). Stdout keeps draining afterwards (access logs).
 */
export function start(script, env, ready = /"port":(\d+)/) {
  return startCommand(process.execPath, Array.isArray(script) ? script : [script], env, ready);
}

/** Any command, ready once its stdout matches `ready` (as `start`). */
export function startCommand(command, argv, env, ready) {
  const child = spawn(command, argv, {
    env: { ...process.env, ...env },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  children.push(child);
  return new Promise((resolve, reject) => {
    let out = '';
    const onData = (d) => {
      out += d;
      const match = ready.exec(out);
      if (!match) return;
      child.stdout.off('data', onData);
      child.stdout.resume();
      resolve({
        child,
        pid: child.pid,
        url: match[1].startsWith('http') ? match[1] : `http://127.0.0.1:${match[1]}`,
      });
    };
    child.stdout.on('data', onData);
    child.once('exit', (code) => reject(new Error(`${command} ${argv.join(' ')} exited ${code}: ${out}`)));
  });
}

/** Starts a peer process and waits until `readyUrl` answers (any HTTP status). */
export async function startPeer(command, argv, env, readyUrl, timeoutMs = 90_000) {
  const child = spawn(command, argv, {
    env: { ...process.env, ...env },
    stdio: ['ignore', 'ignore', 'ignore'],
  });
  children.push(child);
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (child.exitCode !== null) throw new Error(`${command} exited ${child.exitCode}`);
    const up = await request(readyUrl).then(
      (r) => r.body.dump().then(() => true),
      () => false,
    );
    if (up) return child.pid;
    await new Promise((r) => setTimeout(r, 250));
  }
  throw new Error(`${command} did not start`);
}

/** Any other command (a redis-server), stopped with the rest. */
export function spawnTracked(command, argv) {
  const child = spawn(command, argv, { stdio: 'ignore' });
  children.push(child);
  return child;
}

export function stopAll() {
  for (const child of children) child.kill('SIGTERM');
}

export const freePort = () => 20000 + Math.floor(Math.random() * 20000);

/** User + system CPU time of a process in ms (CLK_TCK is 100 on Linux). */
export function cpuMs(pid) {
  const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ');
  return ((Number(fields[11]) + Number(fields[12])) * 1000) / 100;
}

export function rssMb(pid) {
  return Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))[1]) / 1024;
}

/** The most RSS the process has had since it started (the kernel's high-water mark, VmHWM), in MB. */
export function peakRssMb(pid) {
  return Number(/VmHWM:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))[1]) / 1024;
}

export const pct = (xs, p) =>
  xs.length ? [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor((p / 100) * xs.length))] : NaN;
