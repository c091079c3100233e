import type { Detector } from './detector';
import { cardDetector, emailDetector, ibanDetector, phoneDetector } from './personal-data-detectors';
import {
  apiKeyDetector,
  authorizationHeaderDetector,
  bearerTokenDetector,
  jwtDetector,
  secretAssignmentDetector,
  urlPasswordDetector,
} from './secret-detectors';

/**
 * The built-in detectors, in the order they run (each on the text the previous ones left).
 *
 * Order: credentials of known shapes first, so a key inside an Authorization header or an assignment reads
 * `[api_key]` (the header and assignment detectors leave a marker alone); then headers, bearer tokens,
 * secret-named assignments and passwords in URLs (before emails: `user:pw@host` is not an address); then
 * personal data. IBANs before cards and cards before phone numbers: a number that is one is named as it, and the
 * later detectors do not see its digits.
 *
 * Engine: these are plain JS regexes, not RE2JS, because they are fixed, reviewed here, and V8 runs them several
 * times faster. V8 backtracks, so each pattern is written to stay linear in the text:
 * - no repetition that something after it can make fail is unbounded; each is capped by a small constant (an
 *   email's local part at 64, a header value at 4096), so a failing attempt at one start costs a constant;
 * - a match starts only where the run of characters it belongs to starts (a negative lookbehind on that run's
 *   characters), so the few unbounded runs (a key's body, a JWT's parts) are scanned from one start each, and
 *   stand last in their pattern or before a literal their own characters exclude;
 * - nothing is nested in a way that lets the same characters be split two ways, except inside bounded groups;
 *   checks that would need that (Luhn, MOD 97, a phone number's parts) run in code on the candidate.
 * test/unit/redaction-linear-time.spec.ts runs each on a megabyte of adversarial text (long runs of digits, `@`,
 * key prefixes, `Bearer`) as a safety net.
 */
export const BUILT_IN_DETECTORS: readonly Detector[] = [
  apiKeyDetector,
  jwtDetector,
  authorizationHeaderDetector,
  bearerTokenDetector,
  secretAssignmentDetector,
  urlPasswordDetector,
  emailDetector,
  ibanDetector,
  cardDetector,
  phoneDetector,
];
