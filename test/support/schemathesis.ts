import { execFileSync, spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';

const root = join(__dirname, '../..');
const VENV = join(root, '.cache/schemathesis-venv');
export const SCHEMATHESIS = join(VENV, 'bin/schemathesis');
const VERSION = '4.32.5';

/** Installs schemathesis (PyPI) into .cache when missing, as the tests need it. */
export function ensureSchemathesis(): void {
  if (existsSync(SCHEMATHESIS)) return;
  execFileSync('python3', ['-m', 'venv', VENV], { stdio: 'ignore', timeout: 120_000 });
  execFileSync(
    join(VENV, 'bin/pip'),
    ['install', '--quiet', '--disable-pip-version-check', `schemathesis==${VERSION}`],
    { stdio: 'ignore', timeout: 600_000 },
  );
}

/** Runs `schemathesis run` against a live schema URL; resolves with its exit code and output. */
export function runSchemathesis(
  schemaUrl: string,
  args: string[],
): Promise<{ code: number | null; output: string }> {
  return new Promise((resolve) => {
    let output = '';
    const child = spawn(SCHEMATHESIS, ['run', schemaUrl, ...args], {
      env: {
        ...process.env,
        SCHEMATHESIS_HOOKS: 'schemathesis_hooks',
        PYTHONPATH: join(__dirname, '../fuzz'),
        NO_COLOR: '1',
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    child.stdout.on('data', (d) => (output += d));
    child.stderr.on('data', (d) => (output += d));
    child.on('exit', (code) => resolve({ code, output }));
  });
}
