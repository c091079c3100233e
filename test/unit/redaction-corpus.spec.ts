import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Redactor } from '../../src/request-log/redaction/redactor';

/**
 * The redaction corpus: realistic prompts (a support ticket, a pasted .env, a payment question, a German payment
 * reminder, a curl line with a JWT, code and logs that must come through untouched), each beside its expected
 * redacted text (`<case>.redacted.txt`). A detector that finds too little or too much changes one of them.
 */
const CORPUS = join(__dirname, '../fixtures/redaction-corpus');
const cases = readdirSync(CORPUS)
  .filter((name) => name.endsWith('.txt') && !name.endsWith('.redacted.txt'))
  .map((name) => name.replace(/\.txt$/, ''));

describe('redaction corpus', () => {
  const redactor = new Redactor();

  it('has the cases it is meant to have', () => {
    expect(cases.sort()).toEqual([
      'code-versions-uuids',
      'env-file',
      'german-iban',
      'jwt-curl',
      'logs-timestamps-ips',
      'payment-question',
      'support-ticket',
    ]);
  });

  it.each(cases)('%s: redacted as expected', (name) => {
    const prompt = readFileSync(join(CORPUS, `${name}.txt`), 'utf8');
    const expected = readFileSync(join(CORPUS, `${name}.redacted.txt`), 'utf8');
    expect(redactor.redactText(prompt)).toBe(expected);
  });

  it('redacting twice changes nothing more (markers are never matched again)', () => {
    for (const name of cases) {
      const once = redactor.redactText(readFileSync(join(CORPUS, `${name}.txt`), 'utf8'));
      expect(redactor.redactText(once)).toBe(once);
    }
  });
});
