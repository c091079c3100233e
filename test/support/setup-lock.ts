import { mkdirSync, rmSync, statSync } from 'node:fs';
import { join } from 'node:path';

const cache = join(__dirname, '../../.cache');
const depth = new Map<string, number>();

/**
 * Jest runs suites in parallel processes, and several of them set up the same thing in .cache/ (the local runtime and
 * models, the agent CLIs): two pip installs, downloads or `npm ci`s into the same place at once broke one of them
 * (seen in CI). So setup runs under a lock directory `.cache/<name>.lock` (mkdir is atomic), re-entrant within a
 * process; a lock older than 20 minutes is stale (its holder died).
 */
export function underSetupLock(name: string, setup: () => void): void {
  if ((depth.get(name) ?? 0) > 0) return setup();
  const lock = join(cache, `${name}.lock`);
  mkdirSync(cache, { recursive: true });
  for (;;) {
    try {
      mkdirSync(lock);
      break;
    } catch {
      const age = Date.now() - (statSync(lock, { throwIfNoEntry: false })?.mtimeMs ?? Date.now());
      if (age > 20 * 60_000) rmSync(lock, { recursive: true, force: true });
      Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 200); // a synchronous sleep: setup is synchronous
    }
  }
  depth.set(name, (depth.get(name) ?? 0) + 1);
  try {
    setup();
  } finally {
    depth.set(name, depth.get(name)! - 1);
    rmSync(lock, { recursive: true, force: true });
  }
}
