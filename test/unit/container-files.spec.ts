import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parse } from 'yaml';

const root = join(__dirname, '../..');
const read = (path: string) => readFileSync(join(root, path), 'utf8');
const dockerfile = read('Dockerfile');

/**
 * Whether the build context holds `path`, by .dockerignore's rules as Docker applies them to this file's patterns:
 * the last pattern that matches decides, `!` lets back in, `*` matches every top-level entry, and a pattern naming a
 * folder covers what is under it. (Enough for the allowlist we write; not every Go glob Docker supports.)
 */
function inContext(path: string): boolean {
  const patterns = read('.dockerignore')
    .split('\n')
    .map((line) => line.trim())
    .filter((line) => line && !line.startsWith('#'));
  let included = true;
  for (const pattern of patterns) {
    const negated = pattern.startsWith('!');
    const glob = (negated ? pattern.slice(1) : pattern).replace(/\/$/, '');
    if (glob === '*' || path === glob || path.startsWith(`${glob}/`)) included = negated;
  }
  return included;
}

/** The sources of the Dockerfile's COPY lines that read the build context (not another stage). */
const contextCopies = [...dockerfile.matchAll(/^COPY (?!.*--from=)(?:--\S+ )*(.+) \S+$/gm)].flatMap((m) =>
  m[1].split(' '),
);

describe('the container build', () => {
  it('lets into the build context every file the Dockerfile copies', () => {
    expect(contextCopies).toEqual(
      expect.arrayContaining(['src', 'config', 'package.json', 'deploy/docker/entrypoint.sh']),
    );
    for (const source of contextCopies)
      expect({ source, inContext: inContext(source) }).toEqual({ source, inContext: true });
    expect(inContext('src/main.ts')).toBe(true);
  });

  it('keeps .cache/, the runtimes installed here, node_modules, builds, tests and their output out of it', () => {
    for (const path of [
      '.cache/models/SmolLM2-135M-Instruct.Q4_1.gguf',
      '.cache/agent-clis',
      '.cache/node',
      'runtimes/local/node_modules/node-llama-cpp/package.json',
      'node_modules/typescript/package.json',
      'dist/main.js',
      'test/e2e/chat.e2e.spec.ts',
      'test-results/trace.zip',
      'coverage/lcov.info',
      'schemathesis-report/junit.xml',
      'bench/peers/litellm-venv',
      '.git/HEAD',
      '.env',
    ])
      expect({ path, inContext: inContext(path) }).toEqual({ path, inContext: false });
  });

  it('runs on the Node major scripts/node-runtime.json brings to older machines', () => {
    const major = (JSON.parse(read('scripts/node-runtime.json')) as { version: string }).version.split(
      '.',
    )[0];
    const nodeStages = [...dockerfile.matchAll(/^FROM (node:\S+)/gm)].map((m) => m[1]);
    expect(nodeStages.length).toBeGreaterThanOrEqual(2);
    for (const image of nodeStages) expect(image).toMatch(new RegExp(`^node:${major}[-.]`));
  });

  it('ships the models the shipped config names, so the image answers with no vendor key', () => {
    const config = parse(read('config/switchyard.yaml'));
    const defaults = Object.values(config.backends as Record<string, { local?: { modelPath: string } }>)
      .map((backend) => backend.local?.modelPath)
      .filter((path): path is string => !!path)
      .map((path) => /:-([^}]+)\}/.exec(path)![1]);
    expect(defaults).toHaveLength(2);
    const shipped = /^COPY --from=models .*$/m.exec(dockerfile)![0];
    for (const path of defaults) expect(shipped).toContain(`/app/${path}`);
    expect(dockerfile).toMatch(/^COPY --from=local-runtime .*\/app\/runtimes\/local /m);
  });
});

describe('the gateway start', () => {
  /** The node flags before dist/main.js in a command line (argv array or shell words). */
  const flagsBefore = (argv: string[]) => argv.slice(argv.indexOf('node') + 1, argv.indexOf('dist/main.js'));
  const production = ['--max-semi-space-size=16'];

  it('starts the gateway with the same V8 flags everywhere it is started for real, and the benchmarks do too', () => {
    const cmd = /^CMD (\[.*\])$/m.exec(dockerfile)?.[1];
    expect(flagsBefore(JSON.parse(cmd ?? '[]') as string[])).toEqual(production);
    const k8s = parse(read('deploy/k8s/deployment.yaml')) as {
      spec: { template: { spec: { containers: Array<{ name: string; args: string[] }> } } };
    };
    const gateway = k8s.spec.template.spec.containers.find((c) => c.name === 'gateway');
    expect(flagsBefore(gateway?.args ?? [])).toEqual(production);
    const scripts = (JSON.parse(read('package.json')) as { scripts: Record<string, string> }).scripts;
    for (const name of ['start', 'start:dev']) {
      const words = scripts[name].split(/[\s"]+/).filter(Boolean);
      const last = words.lastIndexOf('dist/main.js');
      expect({ name, flags: flagsBefore(words.slice(words.lastIndexOf('node', last))) }).toEqual({
        name,
        flags: production,
      });
    }
    const quickstart = /^node (.*)dist\/main\.js &$/m.exec(read('scripts/quickstart.sh'))?.[1];
    expect(quickstart?.trim().split(/\s+/)).toEqual(production);
    // The benchmarks measure the gateway as it runs in production (bench/lib/switchyard.mjs).
    const bench = /export const PRODUCTION_NODE_ARGS = (\[.*\]);/.exec(read('bench/lib/switchyard.mjs'))?.[1];
    expect(JSON.parse((bench ?? '[]').replace(/'/g, '"'))).toEqual(production);
  });
});
