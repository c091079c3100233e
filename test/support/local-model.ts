import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';

const root = join(__dirname, '../..');
export const LOCAL_MODEL = join(root, '.cache/models/SmolLM2-135M-Instruct.Q4_1.gguf');
export const LOCAL_RUNTIME = join(root, 'runtimes/local');

/** Installs the local runtime and fetches the default model when missing (what the README's commands do). */
export function ensureLocalModel(): void {
  if (!existsSync(join(LOCAL_RUNTIME, 'node_modules/node-llama-cpp'))) {
    execFileSync('bash', [join(root, 'scripts/local-install.sh')], { stdio: 'ignore', timeout: 300_000 });
  }
  if (!existsSync(LOCAL_MODEL)) execFileSync('python3', [join(root, 'scripts/fetch-model.py')], { cwd: root, stdio: 'ignore', timeout: 300_000 });
}

/** Token counts from node-llama-cpp driven directly on the same GGUF (the tests' reference). */
export function referenceTokens(history: unknown[], text: string): { prompt: number; text: number } {
  const out = execFileSync(process.execPath, [join(__dirname, 'reference-tokens.mjs'), JSON.stringify({ modelPath: LOCAL_MODEL, runtimeDir: LOCAL_RUNTIME, history, text })], {
    encoding: 'utf8',
    timeout: 60_000,
    stdio: ['ignore', 'pipe', 'ignore'],
  });
  return JSON.parse(out) as { prompt: number; text: number };
}
