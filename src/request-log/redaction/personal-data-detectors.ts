import { passesIbanCheck, passesLuhn } from './checksums';
import { markerOf, regexDetector, type Detector } from './detector';

/*
 * Personal and payment data: email addresses, IBANs, card numbers, phone numbers. Plain JS regexes kept linear
 * as the credential detectors are (see built-in-detectors.ts): every repetition bounded by a small constant, a
 * match starting only where the run it belongs to starts (negative lookbehind). Checks that need arithmetic (Luhn,
 * MOD 97, digit counts) run in code on the candidate, never in the regex.
 */

/**
 * An address: local part (at most 64 characters, RFC 5321; an apostrophe inside, `o'neil`, but not first, so
 * a quoted `'bob@example.com'` keeps its quote), `@`, up to eight dotted labels of at most 63, a
 * top-level domain of letters.
 */
export const emailDetector: Detector = regexDetector({
  kind: 'email',
  pattern:
    /(?<![A-Za-z0-9._%+-])[A-Za-z0-9._%+-][A-Za-z0-9._%+'-]{0,63}@[A-Za-z0-9][A-Za-z0-9-]{0,62}(?:\.[A-Za-z0-9][A-Za-z0-9-]{0,62}){0,7}\.[A-Za-z]{2,24}(?![A-Za-z0-9-])/g,
  mayContain: (text) => text.includes('@'),
});

/**
 * An IBAN, in electronic form (`DE89370400440532013000`) or printed in groups of four (`DE89 3704 0044 0532 0130
 * 00`): a country code, two check digits, 11 to 30 letters and digits, kept only when ISO 7064 MOD 97-10 holds
 * (a random code of that shape passes one time in 97). Upper case only, as IBANs are written.
 */
export const ibanDetector: Detector = regexDetector({
  kind: 'iban',
  pattern: /(?<![A-Za-z0-9])[A-Z]{2}\d{2}(?: ?[A-Z0-9]{4}){2,7}(?: ?[A-Z0-9]{1,4})?(?![A-Za-z0-9])/g,
  replace: (match) => {
    const iban = match.replace(/ /g, '');
    return iban.length >= 15 && iban.length <= 34 && passesIbanCheck(iban) ? markerOf('iban') : match;
  },
});

/**
 * A payment card number: 13 to 19 digits in one run, or grouped as printed on cards (4-4-4-4 with up to 3 more,
 * 4-6-5 and 4-6-4) with spaces or dashes. Kept only when its first digit is that of a card network (2 to 6:
 * Mastercard, Amex, Diners, JCB, Visa, Discover, UnionPay, Maestro; so epoch-millisecond timestamps, which start
 * with 1, and numbers with a leading 0 are never cards) and the Luhn check passes. The digits of a printed IBAN
 * whose check failed (`DE89 3704 ...`) are not a card either.
 */
export const cardDetector: Detector = regexDetector({
  kind: 'card',
  pattern:
    /(?<![\w.,+-])(?<![A-Z]{2}\d{2} )(?:\d{13,19}|\d{4}([ -])\d{4}\1\d{4}\1\d{1,4}(?:\1\d{1,3})?|\d{4}([ -])\d{6}\2\d{4,5})(?![\w]|[.,-]\d)/g,
  replace: (match) => {
    const digits = match.replace(/[ -]/g, '');
    return digits.length >= 13 && /^[2-6]/.test(digits) && passesLuhn(digits) ? markerOf('card') : match;
  },
});

/**
 * An international number as written: `+`, then 8 to 15 digits with single separators (space, dash, dot) and at
 * most one group in parentheses at a time (`+44 (0)20 7946 0958`). A scan, not a regex: a regex for this shape
 * would split runs of digits in many ways before failing.
 */
export function isInternationalPhone(candidate: string): boolean {
  let digits = 0;
  let afterSeparator = true; // after the `+`: a digit must come first
  let inParens = false;
  for (const char of candidate.slice(1)) {
    if (char >= '0' && char <= '9') {
      digits++;
      afterSeparator = false;
    } else if (char === '(') {
      if (inParens) return false;
      inParens = true;
      afterSeparator = true;
    } else if (char === ')') {
      if (!inParens || afterSeparator) return false;
      inParens = false;
    } else {
      if (afterSeparator) return false;
      afterSeparator = true;
    }
  }
  return !inParens && !afterSeparator && digits >= 8 && digits <= 15;
}

/**
 * Phone numbers, in the forms people write them:
 * - international, with `+` and a country code: 8 to 15 digits (E.164's maximum), `+49 30 1234567`,
 *   `+1 (415) 555-0134`, `+44 20 7946 0958`;
 * - North American with separators: `(415) 555-0134`, `415-555-0134`, `415.555.0134`, `1-800-555-0199`;
 * - national with a trunk 0 and separators: `030 1234567`, `0151 23456789`, `(030) 123 4567`, `020 7946 0958`,
 *   9 to 12 digits; and the French `01 23 45 67 89` (five pairs, one separator throughout).
 * A national number needs its separators: a bare run of digits is as likely an order number or an id. Dates
 * (`2024-11-27`, `01.02.2024`), times, version strings, IP addresses, UUIDs and prices have none of these shapes.
 */
export const phoneDetector: Detector = regexDetector({
  kind: 'phone',
  pattern: new RegExp(
    [
      // international: a bounded run of digits and separators, its shape checked in code
      String.raw`(?<![\w+])\+[1-9][\d .()-]{6,22}\d(?!\d)`,
      // North American
      String.raw`(?<![\w.+/-])(?:1[ .-])?(?:\(\d{3}\) ?|\d{3}[ .-])\d{3}[ .-]\d{4}(?![\w]|[.,/-]\d)`,
      // national, trunk 0
      String.raw`(?<![\w.+/-])(?:\(0\d{1,4}\) ?|0\d{1,4}[ /-])\d{3,8}(?:[ -]\d{2,8}){0,2}(?![\w]|[.,/-]\d)`,
      // French pairs
      String.raw`(?<![\w.+/-])0[1-9]([ .-])\d{2}(?:\1\d{2}){3}(?![\w]|[.,/-]\d)`,
    ].join('|'),
    'g',
  ),
  replace: (match) => {
    if (match.startsWith('+')) return isInternationalPhone(match) ? markerOf('phone') : match;
    const digits = match.replace(/\D/g, '').length;
    if (match.startsWith('0') || match.startsWith('(0'))
      return digits >= 9 && digits <= 12 ? markerOf('phone') : match;
    return markerOf('phone');
  },
});
