import { execFile, execFileSync } from 'node:child_process';
import { promisify } from 'node:util';
import { existsSync, renameSync } from 'node:fs';
import { join } from 'node:path';
import { underSetupLock as underLocalSetupLock } from './setup-lock';

const root = join(__dirname, '../..');
export const LOCAL_MODEL = join(root, '.cache/models/SmolLM2-135M-Instruct.Q4_1.gguf');
export const LOCAL_RUNTIME = join(root, 'runtimes/local');

/**
 * A local backend on LOCAL_MODEL for a test gateway's config (startTestGateway's `config.backends`): one sequence,
 * four queued, a 1,024-token context, one thread, 64 tokens by default; `local` changes any of them (config.schema.ts,
 * LocalConfig), e.g. `localBackend({ contextSize: 2048, autoToolChoice: 'callFirst' })`.
 */
export function localBackend(local: Record<string, unknown> = {}): {
  type: 'local';
  local: Record<string, unknown>;
} {
  return {
    type: 'local',
    local: {
      modelPath: LOCAL_MODEL,
      parallel: 1,
      queueSize: 4,
      contextSize: 1024,
      threads: 1,
      defaultMaxTokens: 64,
      ...local,
    },
  };
}

/** One lock for the runtime, the models and the gguf venv: they build on each other. */
const underSetupLock = (setup: () => void) => underLocalSetupLock('local-setup', setup);

/** Installs the local runtime and fetches the default model when missing (what the README's commands do). */
export function ensureLocalModel(): void {
  underSetupLock(() => {
    if (!existsSync(join(LOCAL_RUNTIME, 'node_modules/node-llama-cpp'))) {
      execFileSync('bash', [join(root, 'scripts/local-install.sh')], { stdio: 'ignore', timeout: 300_000 });
    }
    if (!existsSync(LOCAL_MODEL))
      execFileSync('python3', [join(root, 'scripts/fetch-model.py')], {
        cwd: root,
        stdio: 'ignore',
        timeout: 300_000,
      });
  });
}

export const EMBEDDING_MODEL = join(root, '.cache/models/all-MiniLM-L6-v2.f16.gguf');

/** The runtime and the default embedding model (fetched and converted by scripts/fetch-model.py, as the quickstart does). */
export function ensureEmbeddingModel(): void {
  underSetupLock(() => {
    ensureLocalModel();
    if (!existsSync(EMBEDDING_MODEL)) {
      execFileSync('python3', [join(root, 'scripts/fetch-model.py'), '--model', 'minilm-l6-embed'], {
        cwd: root,
        stdio: 'ignore',
        timeout: 600_000,
      });
    }
  });
}

/**
 * Token counts from node-llama-cpp driven directly on the same GGUF (the tests' reference; `functions` are documented
 * in the prompt as its function calling does). Asynchronous on
 * purpose: loading the model takes seconds on a loaded machine, and a synchronous child blocked the test's event
 * loop meanwhile, so the client never saw the gateway close its idle keep-alive socket and the next request went
 * out on a dead one (ECONNRESET, seen in CI).
 */
export async function referenceTokens(
  history: unknown[],
  text: string,
  functions?: object,
): Promise<{ prompt: number; text: number }> {
  const { stdout } = await promisify(execFile)(
    process.execPath,
    [
      join(__dirname, 'reference-tokens.mjs'),
      JSON.stringify({ modelPath: LOCAL_MODEL, runtimeDir: LOCAL_RUNTIME, history, text, functions }),
    ],
    { encoding: 'utf8', timeout: 60_000 },
  );
  return JSON.parse(stdout) as { prompt: number; text: number };
}

/**
 * A GGUF whose chat template has a thought section, for the thinking tests. No small thinking model ships on
 * the registries this machine reaches, so this is the default model's weights with a QwQ-style template
 * (test/fixtures/local/think-chat-template.jinja: ChatML, `<think>` opened by the generation prompt, earlier
 * thoughts stripped), written with gguf-py's gguf-new-metadata (llama.cpp's own GGUF library, from PyPI).
 * The thoughts are not smart, but everything the gateway does with them is real: node-llama-cpp detects the
 * section from the template, the budget is enforced in generation, and the tokens are the model's.
 */
export const THINKING_MODEL = join(root, '.cache/models/SmolLM2-135M-Instruct.think-template.gguf');

export function ensureThinkingModel(): void {
  underSetupLock(() => buildThinkingModel());
}

function buildThinkingModel(): void {
  ensureLocalModel();
  if (existsSync(THINKING_MODEL)) return;
  const venv = join(root, '.cache/gguf-venv');
  if (!existsSync(join(venv, 'bin/gguf-new-metadata'))) {
    execFileSync('python3', ['-m', 'venv', venv], { stdio: 'ignore', timeout: 120_000 });
    execFileSync(
      join(venv, 'bin/pip'),
      ['install', '--quiet', '--disable-pip-version-check', 'gguf==0.19.0'],
      { stdio: 'ignore', timeout: 300_000 },
    );
  }
  const template = join(__dirname, '../fixtures/local/think-chat-template.jinja');
  execFileSync(
    join(venv, 'bin/gguf-new-metadata'),
    [
      '--chat-template-file',
      template,
      '--general-name',
      'SmolLM2 135M think-template',
      LOCAL_MODEL,
      `${THINKING_MODEL}.tmp`,
      '--force',
    ],
    {
      stdio: 'ignore',
      timeout: 120_000,
    },
  );
  renameSync(`${THINKING_MODEL}.tmp`, THINKING_MODEL);
}
