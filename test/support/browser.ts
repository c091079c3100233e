import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { chromium, type Browser } from 'playwright-core';

const CHROMIUM = '/usr/bin/chromium';

/**
 * Debian's Chromium, driven by playwright-core (which downloads no browser of its own). Installed from Debian's
 * packages when missing, as CI's machine starts without it.
 */
export async function launchChromium(): Promise<Browser> {
  if (!existsSync(CHROMIUM)) {
    const aptGet = (...args: string[]) => {
      const argv = process.getuid?.() === 0 ? ['apt-get', ...args] : ['sudo', '-n', 'apt-get', ...args];
      execFileSync(argv[0], argv.slice(1), {
        stdio: 'ignore',
        timeout: 600_000,
        env: { ...process.env, DEBIAN_FRONTEND: 'noninteractive' },
      });
    };
    try {
      aptGet('install', '-y', '--no-install-recommends', 'chromium');
    } catch {
      aptGet('update'); // the package lists may be missing on a fresh machine
      aptGet('install', '-y', '--no-install-recommends', 'chromium');
    }
  }
  // No sandbox: CI runs as root, where Chromium's sandbox refuses to start.
  return chromium.launch({ executablePath: CHROMIUM, args: ['--no-sandbox', '--disable-dev-shm-usage'] });
}
