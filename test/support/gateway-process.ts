import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/** The built gateway and CLI, run as real processes, as an operator would. */
export const MAIN = join(__dirname, '../../dist/main.js');
export const CLI = join(__dirname, '../../dist/cli/main.js');

export function writeConfig(yaml: string): string {
  const path = join(mkdtempSync(join(tmpdir(), 'switchyard-')), 'switchyard.yaml');
  writeFileSync(path, yaml);
  return path;
}

export interface RunningProcess {
  child: ChildProcess;
  output: () => string;
  exit: Promise<number | null>;
}

export function run(
  configPath: string,
  env: Record<string, string> = {},
  script = MAIN,
  args: string[] = [],
): RunningProcess {
  let output = '';
  const child = spawn(process.execPath, [script, ...args], {
    env: { PATH: process.env.PATH, SWITCHYARD_CONFIG: configPath, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  child.stdout!.on('data', (d) => (output += d));
  child.stderr!.on('data', (d) => (output += d));
  const exit = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
  return { child, output: () => output, exit };
}

/**
 * The URL the gateway process logs once it listens. Waits up to 25 s (inside jest's 30 s): a cold start (~1,400
 * modules loaded) took over 10 s on a loaded 2-core CI machine.
 */
export async function waitForListening(output: () => string, timeoutMs = 25_000): Promise<string> {
  for (const deadline = Date.now() + timeoutMs; Date.now() < deadline;) {
    const match = /"url":"(http:\/\/[^"]+)"/.exec(output());
    if (match) return match[1];
    await new Promise((r) => setTimeout(r, 25));
  }
  throw new Error(`gateway did not start:\n${output()}`);
}

/**
 * Runs the CLI to completion; resolves with its exit code and output. Its logins are kept in an empty folder of its
 * own (XDG_CONFIG_HOME) unless `env` names one: a login of whoever runs the tests must not turn it to a gateway.
 */
export async function runCli(
  configPath: string,
  args: string[],
  env: Record<string, string> = {},
): Promise<{ code: number | null; stdout: string; output: string }> {
  let stdout = '';
  const proc = run(
    configPath,
    { XDG_CONFIG_HOME: mkdtempSync(join(tmpdir(), 'switchyard-cli-')), ...env },
    CLI,
    args,
  );
  proc.child.stdout!.on('data', (d) => (stdout += d));
  const code = await proc.exit;
  return { code, stdout, output: proc.output() };
}

/** SIGTERM a child and wait for it to exit (no-op if it is gone already). */
export async function stopChild(child: ChildProcess | undefined): Promise<void> {
  if (!child || child.exitCode !== null) return;
  await new Promise<void>((resolve) => {
    child.once('exit', () => resolve());
    child.kill('SIGTERM');
  });
}
