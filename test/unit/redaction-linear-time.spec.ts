import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { BUILT_IN_DETECTORS } from '../../src/request-log/redaction/built-in-detectors';
import { Redactor } from '../../src/request-log/redaction/redactor';

/**
 * A safety net, not a speed claim (timing belongs to bench/): redacting a megabyte, realistic or built to make a
 * backtracking regex go quadratic, finishes within a bound a loaded 2-core machine keeps many times over. A
 * pattern that went quadratic on these inputs would take minutes.
 */
const MB = 1 << 20;
const BOUND_MS = 5_000;

/** `unit` repeated to a megabyte. */
const megabyteOf = (unit: string) => unit.repeat(Math.ceil(MB / unit.length)).slice(0, MB);

const CORPUS = join(__dirname, '../fixtures/redaction-corpus');
const realistic = megabyteOf(
  readdirSync(CORPUS)
    .filter((name) => !name.endsWith('.redacted.txt'))
    .map((name) => readFileSync(join(CORPUS, name), 'utf8'))
    .join('\n'),
);

/** Inputs aimed at each detector's repetitions: long runs of what they accept, with the one thing that fails. */
const ADVERSARIAL: Record<string, string> = {
  digits: megabyteOf('1'),
  'digits and spaces': megabyteOf('4111 '),
  'digits and dashes': megabyteOf('0-'),
  'at signs': megabyteOf('@'),
  'local parts without a domain': megabyteOf('a@'),
  'a local part run': megabyteOf('a.b+c_d-e%f'),
  'domain labels without a top-level domain': 'x@' + megabyteOf('a1.'),
  'key prefixes': megabyteOf('sk-'),
  'a key body without end': 'sk-' + megabyteOf('A'),
  'JWT headers without dots': megabyteOf('eyJ'),
  'a JWT part without its dot': 'eyJ' + megabyteOf('a'),
  plus: megabyteOf('+1 '),
  'plus and parentheses': megabyteOf('+1 (2'),
  'Bearer words': megabyteOf('Bearer '),
  'Authorization labels': megabyteOf('Authorization: '),
  'secret names': megabyteOf('password_token_secret'),
  'secret names with colons': megabyteOf('token: '),
  'URL schemes': megabyteOf('a://b:'),
  'IBAN-like': megabyteOf('DE89 3704 '),
  'upper case and digits': megabyteOf('AB12'),
  whitespace: megabyteOf(' \t'),
};

// Each test's own bound is BOUND_MS per detector; jest's default 5 s would cut a run of several short.
jest.setTimeout(120_000);

describe('redaction stays linear on a megabyte', () => {
  const redactor = new Redactor({ patterns: [{ name: 'nested', pattern: '(a+)+b' }] });

  it('a megabyte of realistic prompts', () => {
    const started = Date.now();
    const out = redactor.redactText(realistic);
    expect(Date.now() - started).toBeLessThan(BOUND_MS);
    expect(out).toContain('[email]');
    expect(out).not.toContain('4111 1111 1111 1111');
  });

  it.each(Object.keys(ADVERSARIAL))('a megabyte of %s, through each detector', (name) => {
    // Ends with what each detector's quick test looks for, so every detector scans the whole megabyte.
    const text = `${ADVERSARIAL[name]}@ eyJ Authorization: Bearer x://`;
    const slow = BUILT_IN_DETECTORS.map((detector) => {
      const started = Date.now();
      detector.redact(text);
      return { kind: detector.kind, ms: Date.now() - started };
    }).filter(({ ms }) => ms >= BOUND_MS);
    expect(slow).toEqual([]);
  });

  it('a configured pattern that backtracking engines take exponential time on: (a+)+b on a run of a', () => {
    const started = Date.now();
    expect(redactor.redactText(megabyteOf('a'))).toHaveLength(MB);
    expect(Date.now() - started).toBeLessThan(BOUND_MS);
  });
});
