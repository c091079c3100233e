import { ConfigError } from '../../src/config/config.loader';
import { Redactor } from '../../src/request-log/redaction/redactor';
import { parse as parseYaml } from 'yaml';
import { buildConfig } from '../support/config';
import { snippetsOf } from '../support/doc-snippets';

/** logging.requests.redaction in the config: validated at boot, naming the key, as every other key. */
const minimal = { admin: { apiKey: 'k' } };
const withPatterns = (patterns: unknown) => ({
  ...minimal,
  logging: { requests: { redaction: { patterns } } },
});

const NAME_RULE = 'must be a letter then up to 39 letters, digits, _ or - (it names the marker [<name>])';

/** The config's problems, one line each, or [] when it loads. */
function problemsOf(raw: unknown): string[] {
  try {
    buildConfig(raw, {});
    return [];
  } catch (error) {
    if (!(error instanceof ConfigError)) throw error;
    return error.message.split('\n  - ').slice(1);
  }
}

describe('config: logging.requests.redaction', () => {
  it('defaults to no configured patterns (the built-in detectors always run)', () => {
    expect(buildConfig(minimal, {}).logging.requests.redaction.patterns).toEqual([]);
  });

  it('takes patterns RE2 compiles, and a Redactor built from them uses them', () => {
    const config = buildConfig(
      withPatterns([
        { name: 'employee_id', pattern: 'EMP-\\d{6}' },
        { name: 'ticket-ref', pattern: '(?i)case-[0-9a-f]{8}' },
      ]),
      {},
    );
    const redactor = new Redactor(config.logging.requests.redaction);
    expect(redactor.redactText('EMP-004711 on case-0A1B2C3D')).toBe('[employee_id] on [ticket-ref]');
  });

  it.each([
    ['a backreference', '(a)\\1', 'invalid escape sequence'],
    ['a lookahead', 'key(?=:)', 'invalid or unsupported Perl syntax'],
    ['a lookbehind', '(?<=key:)\\w+', 'invalid named capture'],
    ['an unclosed class', '[a-z', 'missing closing ]'],
  ])('stops the gateway at boot on %s, naming the key', (_what, pattern, reason) => {
    const problems = problemsOf(
      withPatterns([
        { name: 'ok', pattern: 'fine' },
        { name: 'bad', pattern },
      ]),
    );
    expect(problems).toHaveLength(1);
    expect(problems[0]).toMatch(
      /^logging\.requests\.redaction\.patterns\[1\]\.pattern: RE2 cannot compile it \(/,
    );
    expect(problems[0]).toContain(reason);
  });

  it('refuses a pattern that matches the empty string', () => {
    expect(problemsOf(withPatterns([{ name: 'any', pattern: 'x*' }]))).toEqual([
      'logging.requests.redaction.patterns[0].pattern: matches the empty string',
    ]);
  });

  it('refuses a name that cannot name a marker, a missing pattern, unknown keys', () => {
    expect(
      problemsOf(
        withPatterns([
          { name: 'has space', pattern: 'a' },
          { name: '9lives', pattern: 'b' },
          { name: 'no_pattern' },
          { name: 'extra', pattern: 'c', flags: 'i' },
        ]),
      ),
    ).toEqual([
      `logging.requests.redaction.patterns.0.name: ${NAME_RULE}`,
      `logging.requests.redaction.patterns.1.name: ${NAME_RULE}`,
      'logging.requests.redaction.patterns.2.pattern: must be set',
      'logging.requests.redaction.patterns.3.flags: property flags should not exist',
    ]);
  });

  it('reports sections of the wrong kind without crashing', () => {
    expect(problemsOf(withPatterns('EMP-\\d+'))).toEqual([
      'logging.requests.redaction.patterns: must be an array (got "EMP-\\\\d+")',
    ]);
    expect(problemsOf({ ...minimal, logging: { requests: 'full' } })).toEqual([
      'logging.requests: nested property requests must be either object or array (got "full")',
    ]);
    expect(problemsOf(withPatterns([{ name: 'n', pattern: 5 }]))).toEqual([
      'logging.requests.redaction.patterns.0.pattern: must be a string (got 5)',
    ]);
  });

  it("docs/request-log.md's example loads and redacts as the page says", () => {
    const [example] = snippetsOf('docs/request-log.md').filter(
      (snippet) => snippet.lang === 'yaml' && snippet.code.includes('redaction:'),
    );
    const config = buildConfig({ ...minimal, ...(parseYaml(example.code) as object) }, {});
    expect(new Redactor(config.logging.requests.redaction).redactText('EMP-004711, Case-0a1b2c3d')).toBe(
      '[employee_id], [case_ref]',
    );
  });
});
