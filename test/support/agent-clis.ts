import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { copyFileSync, existsSync, mkdirSync, readFileSync, renameSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { underSetupLock } from './setup-lock';

// The Claude Code and Codex CLIs are ~770 MB of native binaries that only these tests use, so they are not in the
// gateway's package.json (a user's `npm ci` stays small): test/support/agent-clis/ pins them with a lock file of its
// own, installed on demand into .cache/agent-clis/<hash of that lock>, the way Prometheus and Chromium are fetched.
const SPEC = join(__dirname, 'agent-clis');
const CACHE = join(__dirname, '../../.cache/agent-clis');

const ENTRY = {
  // The wrapper runs the native binary the package's postinstall put in place (or finds it itself).
  claude: 'node_modules/@anthropic-ai/claude-code/cli-wrapper.cjs',
  codex: 'node_modules/@openai/codex/bin/codex.js',
} as const;

/** Where the pinned CLIs live: a new lock file gets a new directory, so a version bump never mixes with the old. */
function installDir(): string {
  const hash = createHash('sha256');
  for (const file of ['package.json', 'package-lock.json']) hash.update(readFileSync(join(SPEC, file)));
  return join(CACHE, hash.digest('hex').slice(0, 16));
}

/**
 * The script to run with `node` for an agent CLI, installing the pinned CLIs first when they are missing
 * (`npm ci` on test/support/agent-clis, a minute or two the first time, then nothing). Synchronous, under a lock
 * shared by jest's worker processes, into a temporary directory renamed into place, so a suite never sees half an
 * install.
 */
export function agentCli(name: keyof typeof ENTRY): string {
  const dir = installDir();
  const entry = join(dir, ENTRY[name]);
  if (existsSync(entry)) return entry;
  underSetupLock('agent-clis', () => {
    if (existsSync(entry)) return;
    const partial = `${dir}.partial`;
    rmSync(partial, { recursive: true, force: true });
    mkdirSync(partial, { recursive: true });
    for (const file of ['package.json', 'package-lock.json'])
      copyFileSync(join(SPEC, file), join(partial, file));
    // Install scripts run: Claude Code's postinstall puts its platform binary in place of the stub it ships.
    execFileSync('npm', ['ci', '--no-audit', '--no-fund', '--loglevel=error'], {
      cwd: partial,
      stdio: 'ignore',
      timeout: 900_000,
    });
    rmSync(dir, { recursive: true, force: true });
    renameSync(partial, dir);
  });
  if (!existsSync(entry)) throw new Error(`npm ci in ${dir} did not install ${ENTRY[name]}`);
  return entry;
}

/** The directory with the pinned `claude` and `codex` commands (for a PATH), installing them first when missing. */
export function agentCliBin(): string {
  agentCli('claude');
  agentCli('codex');
  return join(installDir(), 'node_modules/.bin');
}
