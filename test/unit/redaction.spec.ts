import { passesIbanCheck, passesLuhn } from '../../src/request-log/redaction/checksums';
import { isInternationalPhone } from '../../src/request-log/redaction/personal-data-detectors';
import { Redactor } from '../../src/request-log/redaction/redactor';

/** Each detector: what it must find (and the marker it leaves) and what it must leave alone. */
const redactor = new Redactor();
const redact = (text: string) => redactor.redactText(text);

/** `[text, expected]`: the expected redaction of each text. */
type Case = [string, string];
const kept = (texts: string[]): Case[] => texts.map((text) => [text, text]);

describe('redaction: API keys and tokens', () => {
  it.each<Case>([
    ['key sk-proj-pUg26hZ8DzCTIntHRnfhXPGVJ3p1345ExUr6HGJD0ojS-NIu here', 'key [api_key] here'],
    ['sk-ant-api03-MaeaFQHps_fLei1E1hwvuV1ApvL3h5e6GsbJ_axcIHgbOkj2Ws4pLyzxKEYlAA', '[api_key]'],
    ['old style sk-8Vq1mXc2Lp9Rt4Ws6Yz0Ab3Cd5Ef7Gh', 'old style [api_key]'],
    ['id=AKIABERVYKKS8QT6BVRU,', 'id=[api_key],'],
    ['temporary ASIAY34FZKBOKMUTVV7A', 'temporary [api_key]'],
    ['AIzaffcbvRFO48m-0D1jlFpD0f1fQ8H4hmqx1UU', '[api_key]'],
    [
      'ghp_cKvtQv8UITAMabUZV2Xsra7QfQEeszvkmUGL and gho_cKvtQv8UITAMabUZV2Xsra7QfQEeszvkmUGL',
      '[api_key] and [api_key]',
    ],
    [
      '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',
      '[api_key]',
    ],
    ['xoxb-829698886295-0537061648760-NQOBkWbhc2s1r3TSnyxDOMAY', '[api_key]'],
    ['xoxp-829698886295-0537061648760', '[api_key]'],
    [
      'stripe sk_live_r7NOzpLGYRJct0Vm7u5HXtqk and rk_test_r7NOzpLGYRJct0Vm7u5HXtqk',
      'stripe [api_key] and [api_key]',
    ],
    ['sy-dd32beb15ba8a9fc-Ck-s3FbWVds8nGoq6lpYLxT61-KHw3HuVkEFMds2EUi', '[api_key]'],
    ['sy_admin_0b17c4e251e04c48_zeRGdk7AKHr1xcMEWfmj4XKa0H084OxBZnPJvcFBNiw', '[api_key]'],
  ])('%s', (text, expected) => expect(redact(text)).toBe(expected));

  it.each(
    kept([
      'pip install scikit-learn; the task-management-system-design doc',
      'sk-short-one',
      'AKIA is the prefix of AWS access key ids',
      'AKIABERVYKKS8QT6BVRUX is one character too long',
      'ghp_ alone, gh_pat_ and xoxq-1234567890',
      'sy-dd32beb15ba8a9fc is a token id, not a token',
    ]),
  )('leaves alone: %s', (text, expected) => expect(redact(text)).toBe(expected));

  const jwt =
    'eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiIxMjM0NTY3ODkwIiwiaWF0IjoxNTE2MjM5MDIyfQ.SflKxwRJSMeKKF2QT4fwpMeJf36POk6yJV_adQssw5c';
  it('finds a JSON Web Token', () => {
    expect(redact(`token=${jwt}&next=1`)).toBe('token=[jwt]&next=1');
    expect(redact(`cookie: id=${jwt}; path=/`)).toBe('cookie: id=[jwt]; path=/');
  });
  it.each(kept(['eyJhbGciOiJIUzI1NiJ9 alone', 'eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0 two parts']))(
    'leaves alone: %s',
    (text, expected) => expect(redact(text)).toBe(expected),
  );
});

describe('redaction: Authorization and Bearer values', () => {
  it.each<Case>([
    ['Authorization: Bearer 9f8e7d6c5b4a39281706f5e4d3c2b1a0', 'Authorization: Bearer [bearer_token]'],
    ['-H "authorization: Basic ZGVwbG95OlRyMHViNGRvciYz"', '-H "authorization: Basic [authorization]"'],
    [
      "headers: {'Authorization': 'Token 4f2c9e1a7b3d5e6f'}",
      "headers: {'Authorization': 'Token [authorization]'}",
    ],
    ['Proxy-Authorization: Digest dXNlcjpwYXNzd29yZA==', 'Proxy-Authorization: Digest [authorization]'],
    ['Authorization: 4f2c9e1a7b3d5e6f8a9b', 'Authorization: [authorization]'],
    ['Authorization: 4f2c9e1a7b3d5e6f8a9b (the old one)', 'Authorization: [authorization] (the old one)'],
    ['x-forwarded-auth: Bearer abcDEF123456ghiJKL', 'x-forwarded-auth: Bearer [bearer_token]'],
    ['use BEARER AbCdEfGhIjKlMnOp for now', 'use BEARER [bearer_token] for now'],
  ])('%s', (text, expected) => expect(redact(text)).toBe(expected));

  it.each(
    kept([
      'The authorization: we need approval from legal first.',
      'Per the docs, the Authorization: header must carry a Bearer token.',
      'Authorization: Bearer',
      'bearer authentication is what OAuth 2 uses; bearer tokens expire',
    ]),
  )('leaves alone: %s', (text, expected) => expect(redact(text)).toBe(expected));

  it('keeps the marker of a key already found inside a header', () => {
    expect(redact('Authorization: Bearer sk-proj-pUg26hZ8DzCTIntHRnfhXPGVJ3p1345ExUr6HGJD0oj')).toBe(
      'Authorization: Bearer [api_key]',
    );
    expect(redact('Authorization: Bearer sk-proj-pUg26hZ8DzCTIntHRnfhXPGVJ3p1345ExUr6HGJD0oj. Then')).toBe(
      'Authorization: Bearer [api_key]. Then',
    );
  });
});

describe('redaction: secret-named assignments and URL passwords', () => {
  it.each<Case>([
    ['AWS_SECRET_ACCESS_KEY=FnjcRqshPUdrtArfYGdaf7G2x8eE+K5vo3WsvRcF', 'AWS_SECRET_ACCESS_KEY=[secret]'],
    ['db_password: "hunter2hunter2"', 'db_password: "[secret]"'],
    ['{"client_secret":"a1b2c3d4e5f6"}', '{"client_secret":"[secret]"}'],
    ['export API_KEY=mysupersecretvalue', 'export API_KEY=[secret]'],
    ['-H "x-api-key: 0123456789abcdef0123456789abcdef"', '-H "x-api-key: [secret]"'],
    [
      'postgres://app:Wint3r-is-c0ming@db.internal:5432/orders',
      'postgres://app:[password]@db.internal:5432/orders',
    ],
    ['amqp://guest:guest@localhost', 'amqp://guest:[password]@localhost'],
  ])('%s', (text, expected) => expect(redact(text)).toBe(expected));

  it.each(
    kept([
      'max_tokens: 1024, prompt_tokens=12, tokenizer = cl100k_base',
      'password: short',
      'redis://127.0.0.1:6379/0 and https://example.com:8443/path',
    ]),
  )('leaves alone: %s', (text, expected) => expect(redact(text)).toBe(expected));
});

describe('redaction: email addresses', () => {
  it.each<Case>([
    ['mail maria.jensen@northwind-traders.com.', 'mail [email].'],
    ["<tom_o'neil+orders@mail.example.co.uk>", '<[email]>'],
    ["to='bob@example.org'", "to='[email]'"],
    ['ALICE@EXAMPLE.COM, bob@sub.sub.example.io', '[email], [email]'],
  ])('%s', (text, expected) => expect(redact(text)).toBe(expected));

  it.each(kept(['@maria on Slack', 'user@localhost', 'a @ b', 'npm i @nestjs/core@12.5.1']))(
    'leaves alone: %s',
    (text, expected) => expect(redact(text)).toBe(expected),
  );
});

describe('redaction: IBANs (MOD 97)', () => {
  it.each<Case>([
    ['IBAN DE89 3704 0044 0532 0130 00.', 'IBAN [iban].'],
    ['DE89370400440532013000', '[iban]'],
    ['GB82 WEST 1234 5698 7654 32', '[iban]'],
    ['FR1420041010050500013M02606 (France)', '[iban] (France)'],
  ])('%s', (text, expected) => expect(redact(text)).toBe(expected));

  it.each(
    kept([
      'DE89 3704 0044 0532 0130 01 has a wrong check digit',
      'DE89370400440532013001',
      'de89370400440532013000 in lower case',
      'AB12 CDEF 3456',
    ]),
  )('leaves alone: %s', (text, expected) => expect(redact(text)).toBe(expected));

  it('computes ISO 7064 MOD 97-10', () => {
    expect(passesIbanCheck('DE89370400440532013000')).toBe(true);
    expect(passesIbanCheck('DE88370400440532013000')).toBe(false);
    expect(passesIbanCheck('GB82WEST12345698765432')).toBe(true);
    expect(passesIbanCheck('GB82WEST12345698765433')).toBe(false);
  });
});

describe('redaction: card numbers (Luhn)', () => {
  it.each<Case>([
    ['Visa 4111 1111 1111 1111, exp 09/28', 'Visa [card], exp 09/28'],
    ['MC 5555-5555-5555-4444.', 'MC [card].'],
    ['card=4242424242424242', 'card=[card]'],
    ['Amex 3782 822463 10005', 'Amex [card]'],
    ['Diners 3056 930902 5904', 'Diners [card]'],
    ['19 digits 6011 0009 9013 9424 009', '19 digits [card]'],
  ])('%s', (text, expected) => expect(redact(text)).toBe(expected));

  it.each(
    kept([
      'receipt 4111 1111 1111 1112',
      '6011000990139425',
      'epoch ms 1764268461001',
      'zero-led 0000 0000 0000 0000',
      'price 4111111111111111.50',
      '4111 1111-1111 1111 mixes its separators',
      'order 4111-1111-1111-11111-1',
      'ratio 0.4111111111111111 and sku AB4111111111111111',
    ]),
  )('leaves alone: %s', (text, expected) => expect(redact(text)).toBe(expected));

  it('computes the Luhn check', () => {
    expect(passesLuhn('4111111111111111')).toBe(true);
    expect(passesLuhn('4111111111111112')).toBe(false);
    expect(passesLuhn('378282246310005')).toBe(true);
    expect(passesLuhn('1764268461001')).toBe(true);
  });
});

describe('redaction: phone numbers', () => {
  it.each<Case>([
    ['call +45 32 12 34 56 today', 'call [phone] today'],
    ['+1 (415) 555-0134', '[phone]'],
    ['+44 (0)20 7946 0958', '[phone]'],
    ['+4915123456789', '[phone]'],
    ['+49 221 98765-0', '[phone]'],
    ['+33.1.42.68.53.00', '[phone]'],
    ['(415) 555-0134 or 415.555.0188 or 1-800-555-0199', '[phone] or [phone] or [phone]'],
    ['Berlin: 030 1234567, mobile 0151 23456789', 'Berlin: [phone], mobile [phone]'],
    ['(030) 123 4567', '[phone]'],
    ['030/1234567', '[phone]'],
    ['London 020 7946 0958', 'London [phone]'],
    ['Paris 01 42 68 53 00 or 01.42.68.53.00', 'Paris [phone] or [phone]'],
  ])('%s', (text, expected) => expect(redact(text)).toBe(expected));

  it.each(
    kept([
      // dates and times
      '2026-11-27, 27.11.2026, 11/27/2026, 01-02-2024 10 people, 2026-11-27T09:41:07.123+01:00, 09:41:08,789',
      // version strings
      'v2.10.0, 1.2.3-beta.4, 24.21.0, 2026.11.27-rc.3, 10.0.19045.3693',
      // UUIDs
      '123e4567-e89b-12d3-a456-426614174000 12345678-1234-1234-1234-123456789012',
      // IP addresses
      '10.0.12.7, 192.168.100.200, 172.16.254.1:443, 2001:db8:85a3::8a2e:370:7334',
      // order numbers and ids
      'order 1184-2207-39, #48213, account 00421789, KD-004711, Steuernummer 214/5678/9012',
      // prices and amounts
      '$1,249.99, 1.234,56 €, 1 250 000 tokens, +12.5%, 0.0025 USD',
      // too few digits, and a + that is arithmetic
      '+12 34 56, +1234567 and 3 +4 = 7',
      // a national number without separators is an id like any other
      '0301234567',
      // digits or a word right after: part of something longer
      'part 040 123456789012 and 030 1234567x',
    ]),
  )('leaves alone: %s', (text, expected) => expect(redact(text)).toBe(expected));

  it('reads the international form: single separators, parentheses closed, 8 to 15 digits', () => {
    expect(isInternationalPhone('+49 30 1234567')).toBe(true);
    expect(isInternationalPhone('+49  30 1234567')).toBe(false);
    expect(isInternationalPhone('+49 (30 1234567')).toBe(false);
    expect(isInternationalPhone('+49 30) 1234567')).toBe(false);
    expect(isInternationalPhone('+1234567')).toBe(false);
    expect(isInternationalPhone('+1234567890123456')).toBe(false);
  });
});

describe('redaction: configured patterns', () => {
  const custom = new Redactor({
    patterns: [
      { name: 'employee_id', pattern: 'EMP-\\d{6}' },
      { name: 'ticket', pattern: '(?i)case-[0-9a-f]{8}' },
    ],
  });

  it('replaces each match by [<name>], before the built-in detectors', () => {
    expect(custom.redactText('EMP-004711 (CASE-0a1b2c3d) wrote from a@example.com')).toBe(
      '[employee_id] ([ticket]) wrote from [email]',
    );
    // Without the pattern, the built-ins alone see these as nothing (or as something else).
    expect(redact('EMP-004711')).toBe('EMP-004711');
  });

  it('runs before the built-ins, so its marker wins over a phone number', () => {
    const beforePhone = new Redactor({ patterns: [{ name: 'branch_line', pattern: '030 \\d{7}' }] });
    expect(beforePhone.redactText('call 030 1234567')).toBe('call [branch_line]');
  });

  it('keeps the text around a match whole when it has non-ASCII characters and emoji', () => {
    expect(custom.redactText('Köln 😀 EMP-004711 😀 ünd EMP-123456!')).toBe(
      'Köln 😀 [employee_id] 😀 ünd [employee_id]!',
    );
  });

  it('puts no marker for an empty match', () => {
    const boundary = new Redactor({ patterns: [{ name: 'b', pattern: '\\bx?' }] });
    expect(boundary.redactText('a x b')).toBe('a [b] b');
  });
});
