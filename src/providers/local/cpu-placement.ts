import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { availableParallelism } from 'node:os';

/**
 * Where local inference runs: how many threads, and which CPUs the worker process is pinned to.
 *
 * By default inference takes every CPU this process may use but the first, which is left to the gateway and its
 * clients, and the worker is pinned to those CPUs, so llama.cpp's threads do not wander onto the gateway's CPU
 * when the gateway (woken once per relayed token) runs on theirs. Unpinned, on the 2-core dev machine, tokens/s
 * through the gateway were 8-12% lower than node-llama-cpp driven directly; pinned, within a few percent
 * (bench/local-model.mjs, docs/performance.md). The gateway itself is not pinned: confining it to the other CPU
 * cost 1.4 ms of first token and ~15% of tokens/s in the same run (every token then needs a cross-CPU wake-up).
 * Pinning needs Linux and `taskset` (util-linux); without them nothing is pinned.
 */
export interface Placement {
  threads: number;
  /** CPUs to pin the worker to; absent when pinning is off or would leave the gateway no CPU of its own. */
  cpus?: number[];
}

export function placementFor(
  config: { threads: number; pinCpus: boolean },
  allowed = allowedCpus(),
): Placement {
  const threads = config.threads || Math.max(1, allowed.length - 1);
  if (!config.pinCpus || threads >= allowed.length) return { threads };
  return { threads, cpus: allowed.slice(allowed.length - threads) };
}

/** The CPUs this process may run on: Linux's `Cpus_allowed_list` (honours cpusets and taskset), else 0..n-1. */
export function allowedCpus(): number[] {
  try {
    const line = /^Cpus_allowed_list:\s*(.+)$/m.exec(readFileSync('/proc/self/status', 'utf8'));
    if (line) return parseCpuList(line[1]);
  } catch {
    // Not Linux: fall through.
  }
  return Array.from({ length: availableParallelism() }, (_, cpu) => cpu);
}

/** "0-3,8,10-11" -> [0, 1, 2, 3, 8, 10, 11] (the kernel's cpu list format). */
export function parseCpuList(list: string): number[] {
  const cpus: number[] = [];
  for (const part of list.trim().split(',')) {
    const [from, to = from] = part.split('-').map(Number);
    for (let cpu = from; cpu <= to; cpu++) cpus.push(cpu);
  }
  return cpus;
}

/** Pins every thread of this process (and the threads it starts later) to `cpus`; returns why not, if it could not. */
export function pinThisProcess(cpus: number[]): string | undefined {
  try {
    execFileSync('taskset', ['--all-tasks', '--cpu-list', '--pid', cpus.join(','), String(process.pid)], {
      stdio: 'ignore',
      timeout: 5_000,
    });
    return undefined;
  } catch (error) {
    return error instanceof Error ? error.message : String(error);
  }
}
