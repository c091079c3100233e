import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';

const root = join(__dirname, '../..');
const VENV = join(root, '.cache/kubernetes-validate-venv');
const BIN = join(VENV, 'bin/kubernetes-validate');
const VERSION = '1.37.0';

/** kubernetes-validate (PyPI; it carries the Kubernetes JSON schemas, so it validates offline), in .cache when missing. */
export function ensureKubernetesValidate(): string {
  if (!existsSync(BIN)) {
    execFileSync('python3', ['-m', 'venv', VENV], { stdio: 'ignore', timeout: 120_000 });
    execFileSync(
      join(VENV, 'bin/pip'),
      ['install', '--quiet', '--disable-pip-version-check', `kubernetes-validate==${VERSION}`],
      { stdio: 'ignore', timeout: 600_000 },
    );
  }
  return BIN;
}
