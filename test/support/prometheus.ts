import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freePort } from './free-port';
import { stopChild } from './gateway-process';
import { eventually } from './eventually';

const CACHE = join(__dirname, '../../.cache/prometheus');

/**
 * The Prometheus server binary: from PATH, or Debian's `prometheus` package unpacked into
 * .cache/ (apt-get download + dpkg-deb -x: no root, no service started, a static binary).
 */
export function ensurePrometheus(): string {
  try {
    return execFileSync('sh', ['-c', 'command -v prometheus'], { encoding: 'utf8' }).trim();
  } catch {
    // not installed: fetch the package below
  }
  const binary = join(CACHE, 'root/usr/bin/prometheus');
  if (existsSync(binary)) return binary;
  mkdirSync(CACHE, { recursive: true });
  execFileSync('apt-get', ['download', 'prometheus'], { cwd: CACHE, stdio: 'ignore', timeout: 120_000 });
  const deb = readdirSync(CACHE).find((file) => file.startsWith('prometheus_') && file.endsWith('.deb'));
  if (!deb) throw new Error('apt-get download prometheus produced no package');
  execFileSync('dpkg-deb', ['-x', join(CACHE, deb), join(CACHE, 'root')], { timeout: 60_000 });
  return binary;
}

export class PrometheusServer {
  port = 0;
  private child?: ChildProcess;
  private output = '';

  get url(): string {
    return `http://127.0.0.1:${this.port}`;
  }

  /**
   * Starts Prometheus on a free port. The port can still be taken between our check and Prometheus's bind
   * (other suites open connections in parallel), so a bind failure is retried on a new port.
   */
  async start(binary: string, configYaml: string): Promise<void> {
    for (let attempt = 0; ; attempt++) {
      this.port = await freePort();
      if (await this.tryStart(binary, configYaml)) return;
      await this.stop();
      if (attempt === 2 || !this.output.includes('address already in use'))
        throw new Error(`prometheus did not start:\n${this.output}`);
      this.output = '';
    }
  }

  private async tryStart(binary: string, configYaml: string): Promise<boolean> {
    const dir = mkdtempSync(join(tmpdir(), 'switchyard-prometheus-'));
    writeFileSync(join(dir, 'prometheus.yml'), configYaml);
    this.child = spawn(
      binary,
      [
        `--config.file=${join(dir, 'prometheus.yml')}`,
        `--storage.tsdb.path=${join(dir, 'data')}`,
        `--web.listen-address=127.0.0.1:${this.port}`,
      ],
      { stdio: ['ignore', 'pipe', 'pipe'] },
    );
    this.child.stdout!.on('data', (d) => (this.output += d));
    this.child.stderr!.on('data', (d) => (this.output += d));
    for (let i = 0; i < 300; i++) {
      if (this.child.exitCode !== null) break;
      const ready = await fetch(`${this.url}/-/ready`).then(
        (r) => r.ok,
        () => false,
      );
      if (ready) return true;
      await new Promise((r) => setTimeout(r, 50));
    }
    return false;
  }

  /** An instant query; returns the result vector. */
  async query(expr: string): Promise<Array<{ metric: Record<string, string>; value: [number, string] }>> {
    const res = await fetch(`${this.url}/api/v1/query?query=${encodeURIComponent(expr)}`);
    const body = (await res.json()) as {
      status: string;
      error?: string;
      data: { resultType: string; result: any[] };
    };
    if (body.status !== 'success') throw new Error(`${expr}: ${body.error}`);
    return body.data.result;
  }

  /**
   * Waits until Prometheus has scraped the gateway after `instant` (epoch ms; the same machine's clock): what the
   * gateway exposed before that instant is then in Prometheus. Read from the target's `lastScrape`, which
   * Prometheus sets when a scrape is done.
   */
  async scrapedAfter(instant: number, timeoutMs = 15_000): Promise<void> {
    await eventually(
      async () => {
        const body = (await (await fetch(`${this.url}/api/v1/targets`)).json()) as {
          data: { activeTargets: Array<{ lastScrape: string }> };
        };
        expect(body.data.activeTargets).toHaveLength(1);
        expect(Date.parse(body.data.activeTargets[0].lastScrape)).toBeGreaterThan(instant);
      },
      timeoutMs,
      100,
    );
  }

  async targetsHealth(): Promise<string[]> {
    const body = (await (await fetch(`${this.url}/api/v1/targets`)).json()) as {
      data: { activeTargets: Array<{ health: string; lastError: string }> };
    };
    return body.data.activeTargets.map((t) => `${t.health}${t.lastError ? `: ${t.lastError}` : ''}`);
  }

  async stop(): Promise<void> {
    await stopChild(this.child);
  }
}
