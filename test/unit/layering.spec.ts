import { readdirSync, readFileSync } from 'node:fs';
import { join, posix } from 'node:path';

/**
 * The layering rules of docs/architecture.md ("Rules the code keeps"), checked on every relative import in src/
 * (the console's page, a separate bundle, aside): the shared vocabulary at the bottom, endpoints on the gateway,
 * families behind the providers module's top-level files.
 */
const SRC = join(__dirname, '../../src');

function sourceFiles(dir: string, out: string[] = []): string[] {
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) sourceFiles(path, out);
    else if (/\.tsx?$/.test(entry.name)) out.push(posix.relative(SRC, path).split('\\').join('/'));
  }
  return out;
}

/** Every relative import in src/ as [importing file, imported path], both relative to src/. */
function imports(): Array<[string, string]> {
  const pairs: Array<[string, string]> = [];
  for (const file of sourceFiles(SRC).filter((f) => !f.startsWith('console/web/'))) {
    const text = readFileSync(join(SRC, file), 'utf8');
    for (const match of text.matchAll(/(?:from\s+|import\s*\(\s*|import\s+)'(\.{1,2}\/[^']*)'/g))
      pairs.push([file, posix.normalize(posix.join(posix.dirname(file), match[1]))]);
  }
  return pairs;
}

const ENDPOINTS = ['chat-completions', 'messages', 'responses', 'embeddings'];
const areaOf = (path: string) => path.split('/')[0];
const endpointOf = (path: string) =>
  path.startsWith('endpoints/') && ENDPOINTS.includes(path.split('/')[1]) ? path.split('/')[1] : undefined;

/** Each rule: which imports break it. */
const RULES: Record<string, (from: string, to: string) => boolean> = {
  'core/ imports only core/': (from, to) => areaOf(from) === 'core' && areaOf(to) !== 'core',
  'nothing outside providers/ reaches into a family or providers/shared/': (from, to) =>
    areaOf(from) !== 'providers' && /^providers\/[^/]+\//.test(to),
  'config/ names no family': (from, to) => areaOf(from) === 'config' && areaOf(to) === 'providers',
  'gateway/ does not depend on an endpoint': (from, to) =>
    areaOf(from) === 'gateway' && areaOf(to) === 'endpoints',
  'providers/ depend on neither the gateway nor an endpoint': (from, to) =>
    areaOf(from) === 'providers' && (areaOf(to) === 'gateway' || areaOf(to) === 'endpoints'),
  'an endpoint imports no other endpoint': (from, to) =>
    endpointOf(from) !== undefined && endpointOf(to) !== undefined && endpointOf(from) !== endpointOf(to),
};

describe('layering (docs/architecture.md)', () => {
  const all = imports();

  it('reads the imports of every area it rules on', () => {
    const areas = new Set(all.map(([from]) => areaOf(from)));
    for (const area of ['core', 'gateway', 'endpoints', 'providers', 'config']) expect(areas).toContain(area);
    expect(all.length).toBeGreaterThan(500);
  });

  it.each(Object.keys(RULES))('%s', (rule) => {
    expect(all.filter(([from, to]) => RULES[rule](from, to)).map(([from, to]) => `${from} -> ${to}`)).toEqual(
      [],
    );
  });

  it('catches a breach: each rule flags an import that breaks it', () => {
    const breaches: Record<string, [string, string]> = {
      'core/ imports only core/': ['core/json-splice.ts', 'common/http/client-source'],
      'nothing outside providers/ reaches into a family or providers/shared/': [
        'gateway/pipeline.ts',
        'providers/shared/sse-decoder',
      ],
      'config/ names no family': ['config/config.schema.ts', 'providers/families'],
      'gateway/ does not depend on an endpoint': [
        'gateway/chat-rules.ts',
        'endpoints/chat-completions/dto/x',
      ],
      'providers/ depend on neither the gateway nor an endpoint': [
        'providers/openai/openai.adapter.ts',
        'gateway/exchange',
      ],
      'an endpoint imports no other endpoint': [
        'endpoints/messages/dto/x.ts',
        'endpoints/chat-completions/dto/y',
      ],
    };
    for (const [rule, [from, to]] of Object.entries(breaches))
      expect([rule, RULES[rule](from, to)]).toEqual([rule, true]);
    expect(
      RULES['an endpoint imports no other endpoint']('endpoints/messages/a.ts', 'endpoints/messages/b'),
    ).toBe(false);
  });
});
