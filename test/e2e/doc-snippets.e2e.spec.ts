import { execFile, spawn } from 'node:child_process';
import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { promisify } from 'node:util';
import ts from 'typescript';
import { parse } from 'yaml';
import { buildConfig } from '../support/config';
import { agentCliBin } from '../support/agent-clis';
import { AnthropicUpstream } from '../support/anthropic-upstream';
import { docFiles, ROOT, snippetsOf, type Snippet } from '../support/doc-snippets';
import { eventually } from '../support/eventually';
import { OpenAIUpstream } from '../support/openai-upstream';
import { ADMIN_KEY, REDIS_URL, startTestGateway, type TestGateway } from '../support/test-gateway';

const run = promisify(execFile);

/**
 * Every fenced code block of README.md and docs/*.md, run against a real gateway on a port, so the docs cannot
 * drift from the code. The conventions (how each language runs, the markers, what passes) are in docs/testing.md,
 * "The docs' snippets". In short:
 * - bash: `bash -euo pipefail` in a scratch checkout (`.cache/quickstart-token` and `-admin-key` in place, the
 *   repository's package.json, node_modules, dist and config linked, so `npx switchyard`, `claude` and `codex`
 *   work), `curl` failing on HTTP errors;
 * - ts/js: transpiled to an ES module and run with node from `node_modules/.cache/doc-snippets/` (the repository's
 *   packages, and LangChain, pinned and installed there on first use, importable);
 * - yaml: a config fragment merged over config/switchyard.yaml and loaded by the config loader;
 * - `<!-- snippet: file PATH -->` writes the block for the blocks after it; `same as PATH` compares it with a
 *   file of the repository; `not run: REASON` skips it, with the reason.
 * A block that runs passes when it exits 0 and the gateway answered one of its requests or more with a 2xx and none
 * with a 5xx. `localhost:8080` and `127.0.0.1:8080` stand for the test gateway. The CLI needs `npm run build`.
 */

// Snippets are written (and LangChain, only a docs example, is installed for this test) under node_modules/.cache,
// where bare imports resolve to the repository's packages; `npm ci` clears it and the next run installs it again.
const SNIPPET_DIR = join(ROOT, 'node_modules/.cache/doc-snippets');
const LANGCHAIN = { '@langchain/openai': '1.6.0', '@langchain/core': '1.4.0' };

/** The model names the docs use, each routed to a stand-in that answers in its vendor's wire format. */
const MODELS: Record<string, unknown> = {
  smollm2: { backend: 'standin', upstreamModel: 'echo' },
  'gpt-6-luna': { backend: 'standin', upstreamModel: 'echo' },
  'gpt-6-sol': { backend: 'standin', upstreamModel: 'echo' },
  'gpt-5.1-codex': { backend: 'standin', upstreamModel: 'echo' },
  // Its own id upstream: Claude Code sends this model mid-conversation system turns, which the stand-in takes from it.
  'claude-sonnet-5-5': { backend: 'claude', upstreamModel: 'claude-sonnet-5-5', thinking: 'native' },
  'text-embedding-3-small': { backend: 'standin', upstreamModel: 'embed', kind: 'embedding' },
  minilm: { backend: 'standin', upstreamModel: 'embed', kind: 'embedding' },
};

const CLAUDE_CODE_ENV = {
  // Claude Code's background calls (titles, summaries) go to the model the snippet names, which the gateway routes.
  ANTHROPIC_SMALL_FAST_MODEL: 'claude-sonnet-5-5',
  ANTHROPIC_DEFAULT_HAIKU_MODEL: 'claude-sonnet-5-5',
  DISABLE_TELEMETRY: '1',
  DISABLE_ERROR_REPORTING: '1',
  DISABLE_AUTOUPDATER: '1',
  CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: '1',
};

interface Seen {
  method: string;
  url: string;
  status?: number;
}

const files = docFiles().map((file) => ({ file, snippets: snippetsOf(file) }));

describe('the docs snippets', () => {
  jest.setTimeout(400_000);
  let openai: OpenAIUpstream;
  let anthropic: AnthropicUpstream;

  beforeAll(async () => {
    [openai, anthropic] = await Promise.all([new OpenAIUpstream().start(), new AnthropicUpstream().start()]);
    await installLangChain();
  });
  afterAll(async () => {
    await Promise.all([openai?.stop(), anthropic?.stop()]);
  });

  it('gives every block a way to run or a reason not to', () => {
    const unrunnable = files
      .flatMap((f) => f.snippets)
      .filter((s) => s.marker.kind === 'run' && s.lang !== 'yaml' && !runnerOf(s))
      .map((s) => `${s.file}:${s.line} (${s.lang || 'no language'})`);
    expect(unrunnable).toEqual([]);
  });

  describe.each(files.filter((f) => f.snippets.length))('$file', ({ snippets }) => {
    let gw: TestGateway;
    let scratch: string;
    let env: Record<string, string>;
    const seen: Seen[] = [];

    beforeAll(async () => {
      gw = await startTestGateway({
        upstreamUrl: openai.url,
        config: {
          backends: { claude: { type: 'anthropic', baseUrl: anthropic.url, apiKey: '${TEST_UPSTREAM_KEY}' } },
          models: MODELS,
          teams: { demo: { models: ['*'] } },
        },
      });
      (gw.gateway.app.getHttpServer() as Server).on(
        'request',
        (req: IncomingMessage, res: ServerResponse) => {
          const entry: Seen = { method: req.method ?? '', url: req.url ?? '' };
          seen.push(entry);
          res.on('close', () => (entry.status = res.statusCode));
        },
      );
      const { token } = await gw.teamToken('demo');
      scratch = scratchCheckout(token, gw.prefix);
      env = {
        // The docs' `claude` and `codex` commands: the pinned CLIs (test/support/agent-clis.ts).
        PATH: `${agentCliBin()}:${process.env.PATH}`,
        HOME: join(scratch, 'home'),
        SWITCHYARD_TOKEN: token,
        SWITCHYARD_ADMIN_KEY: ADMIN_KEY,
        SWITCHYARD_CONFIG: join(scratch, 'cli.yaml'),
        ...CLAUDE_CODE_ENV,
      };
    });
    afterAll(async () => {
      await gw?.close();
      if (scratch) rmSync(scratch, { recursive: true, force: true });
    });

    it.each(snippets.map((s) => [`line ${s.line}: ${describeSnippet(s)}`, s] as const))(
      '%s',
      async (_name, snippet) => {
        const { marker } = snippet;
        if (marker.kind === 'not-run') return; // the reason is in the test's name
        if (marker.kind === 'file') {
          const path = marker.path.replace(/^~\//, `${env.HOME}/`);
          mkdirSync(dirname(path), { recursive: true });
          writeFileSync(path, atGateway(snippet.code, gw.url));
          return;
        }
        if (marker.kind === 'same-as') return expectExcerptOf(snippet, marker.path);
        if (snippet.lang === 'yaml') return expectConfigLoads(snippet);

        const before = seen.length;
        const code = atGateway(snippet.code, gw.url);
        let result: { stdout: string; stderr: string };
        try {
          result = await runnerOf(snippet)!(code, scratch, env);
        } catch (error) {
          const e = error as { code?: number; stdout?: string; stderr?: string };
          throw new Error(
            `${snippet.file}:${snippet.line} exited ${e.code}\n--- stdout\n${e.stdout}\n--- stderr\n${e.stderr}`,
            { cause: error },
          );
        }
        const mine = await eventually(() => {
          const requests = seen.slice(before);
          if (requests.some((r) => r.status === undefined)) throw new Error('requests still open');
          return requests;
        });
        const summary = `${snippet.file}:${snippet.line}: ${JSON.stringify(mine)}\n${result.stdout}\n${result.stderr}`;
        expect({ summary, answered: mine.some((r) => r.status! < 300) }).toEqual({ summary, answered: true });
        expect({ summary, failed: mine.filter((r) => r.status! >= 500) }).toEqual({ summary, failed: [] });
      },
    );
  });
});

type Runner = (
  code: string,
  cwd: string,
  env: Record<string, string>,
) => Promise<{ stdout: string; stderr: string }>;

function runnerOf(snippet: Snippet): Runner | undefined {
  if (['bash', 'sh', 'shell'].includes(snippet.lang)) return runBash;
  if (['ts', 'typescript', 'js', 'javascript'].includes(snippet.lang)) return runModule;
  return undefined; // yaml is not run but loaded as config (expectConfigLoads)
}

function describeSnippet(s: Snippet): string {
  const m = s.marker;
  if (m.kind === 'not-run') return `${s.lang} not run: ${m.reason}`;
  if (m.kind === 'file') return `${s.lang} written to ${m.path}`;
  if (m.kind === 'same-as') return `${s.lang} as in ${m.path}`;
  return s.lang === 'yaml' ? 'yaml config loads' : `${s.lang} runs`;
}

/** The docs' gateway address becomes the test gateway's. */
function atGateway(code: string, url: string): string {
  return code.replace(/(?:https?:\/\/)?(?:localhost|127\.0\.0\.1):8080/g, url);
}

const BASH_PRELUDE = 'curl() { command curl --fail-with-body "$@"; }\n';

async function runBash(code: string, cwd: string, env: Record<string, string>) {
  return runClosed('bash', ['-euo', 'pipefail', '-c', BASH_PRELUDE + code], cwd, env, 360_000);
}

let moduleCount = 0;
async function runModule(code: string, cwd: string, env: Record<string, string>) {
  const js = ts.transpileModule(code, {
    compilerOptions: { module: ts.ModuleKind.ESNext, target: ts.ScriptTarget.ES2022 },
  }).outputText;
  // Written under the repository, so that its packages (and LangChain's) resolve from the snippet.
  const path = join(SNIPPET_DIR, `snippet-${process.pid}-${moduleCount++}.mjs`);
  writeFileSync(path, js);
  try {
    return await runClosed(process.execPath, [path], cwd, env, 60_000);
  } finally {
    rmSync(path, { force: true });
  }
}

/** Runs a command with stdin closed, as in a script (`codex exec` reads a piped stdin as more prompt). */
function runClosed(
  command: string,
  args: string[],
  cwd: string,
  env: Record<string, string>,
  timeoutMs: number,
): Promise<{ stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { cwd, env, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
    child.on('close', (code) => {
      clearTimeout(timer);
      if (code === 0) resolve({ stdout, stderr });
      else reject(Object.assign(new Error(`exit ${code}`), { code, stdout, stderr }));
    });
  });
}

/** A checkout where the quickstart ran: its token files, and the repository's packages, build and config. */
function scratchCheckout(token: string, prefix: string): string {
  const dir = mkdtempSync(join(tmpdir(), 'doc-snippets-'));
  mkdirSync(join(dir, '.cache'));
  mkdirSync(join(dir, 'home'));
  writeFileSync(join(dir, '.cache/quickstart-token'), token);
  writeFileSync(join(dir, '.cache/quickstart-admin-key'), ADMIN_KEY);
  for (const name of ['package.json', 'node_modules', 'dist', 'config'])
    symlinkSync(join(ROOT, name), join(dir, name));
  // The CLI reads the gateway's Redis and key prefix from its config, as an operator's would.
  writeFileSync(
    join(dir, 'cli.yaml'),
    `redis: { url: "${REDIS_URL}", keyPrefix: "${prefix}" }\nadmin: { apiKey: "\${SWITCHYARD_ADMIN_KEY}" }\n`,
  );
  return dir;
}

/** A config fragment, merged over the shipped config entry by entry, must load. */
function expectConfigLoads(snippet: Snippet): void {
  const shippedText = readFileSync(join(ROOT, 'config/switchyard.yaml'), 'utf8');
  const shipped = parse(shippedText) as Record<string, any>;
  const fragment = parse(snippet.code) as Record<string, any>;
  const merged: Record<string, any> = { ...shipped };
  for (const [section, value] of Object.entries(fragment))
    merged[section] = isMap(value) && isMap(shipped[section]) ? { ...shipped[section], ...value } : value;
  // A Redis topology named in the fragment replaces the shipped single server.
  if (fragment.redis?.cluster || fragment.redis?.sentinel) delete merged.redis.url;
  const env: Record<string, string> = {};
  for (const [, name] of `${shippedText}\n${snippet.code}`.matchAll(/\$\{(\w+)\}/g)) env[name] = 'stand-in';
  expect(() => buildConfig(merged, env)).not.toThrow();
}

/** Every key the excerpt sets is set the same way in the file it is taken from. */
function expectExcerptOf(snippet: Snippet, path: string): void {
  const whole = parse(readFileSync(join(ROOT, path), 'utf8')) as unknown;
  expect(whole).toMatchObject(parse(snippet.code) as object);
}

function isMap(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

async function installLangChain(): Promise<void> {
  const installed = Object.entries(LANGCHAIN).every(([name, version]) => {
    const manifest = join(SNIPPET_DIR, 'node_modules', name, 'package.json');
    return existsSync(manifest) && JSON.parse(readFileSync(manifest, 'utf8')).version === version;
  });
  if (installed) return;
  mkdirSync(SNIPPET_DIR, { recursive: true });
  const specs = Object.entries(LANGCHAIN).map(([name, version]) => `${name}@${version}`);
  await run('npm', ['install', '--no-save', '--no-audit', '--no-fund', '--prefix', SNIPPET_DIR, ...specs], {
    timeout: 300_000,
  });
}
