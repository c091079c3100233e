import { countTokens as exactCount } from 'gpt-tokenizer'; // its default encoding is o200k_base
import { countTokens, MAX_RUN, promptTexts, reservationEstimate } from '../../src/usage/token-estimator';

describe('token estimator', () => {
  it('counts ordinary text exactly (o200k_base)', () => {
    const texts = [
      'Hello, world!',
      'The quick brown fox jumps over the lazy dog. '.repeat(50),
      'const x = { a: [1, 2, 3] };\n'.repeat(20),
      '日本語のテキストも数えます。',
    ];
    for (const text of texts) expect(countTokens(text)).toBe(exactCount(text));
  });

  it('counts a long run of one character in pieces: close to exact, never below it by more than a token a piece', () => {
    const run = 'a'.repeat(4 * MAX_RUN + 17);
    const pieces = Math.ceil(run.length / MAX_RUN);
    const exact = exactCount(run);
    expect(countTokens(run)).toBeGreaterThanOrEqual(exact - pieces);
    expect(countTokens(run)).toBeLessThanOrEqual(exact + 2 * pieces);
    // Runs of spaces and of punctuation are pre-tokens too.
    const spaces = `x${' '.repeat(3 * MAX_RUN)}y`;
    expect(Math.abs(countTokens(spaces) - exactCount(spaces))).toBeLessThanOrEqual(6);
    // Text around a long run is counted exactly.
    expect(countTokens(`hello there ${'!'.repeat(MAX_RUN * 2)} bye`)).toBeGreaterThan(3);
  });

  it('counts a 200 KB run of one letter (quadratic for plain BPE: 28 s) in linear time', () => {
    // Not a timing test: it would not finish within Jest's default 5 s timeout if it were quadratic.
    expect(countTokens('a'.repeat(200_000))).toBeGreaterThan(200_000 / MAX_RUN);
  });

  it('reserves prompts at one token per 3 UTF-8 bytes plus the format tokens, with no tokenizer', () => {
    const small = promptTexts([{ role: 'user', content: 'hello there' }]);
    expect(reservationEstimate(small)).toBe(3 + 3 + Math.ceil('userhello there'.length / 3));
    const bigText = 'word '.repeat(4096);
    const big = promptTexts([{ role: 'user', content: bigText }]);
    expect(reservationEstimate(big)).toBe(3 + 3 + Math.ceil((4 + bigText.length) / 3));
    // For English text that is more than the exact count: a safe reservation.
    expect(reservationEstimate(big)).toBeGreaterThan(3 + 3 + exactCount('user') + exactCount(bigText));
    expect(reservationEstimate(promptTexts([{ role: 'user', content: 'é' }]))).toBe(3 + 3 + Math.ceil(6 / 3)); // bytes, not characters
  });
});
