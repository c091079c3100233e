import { PERSONAL_TOKEN_SHAPE } from '../../auth/personal-token-format';
import { TEAM_TOKEN_SHAPE } from '../../auth/token-format';
import { markerOf, regexDetector, type Detector } from './detector';

/*
 * Credentials: API keys and tokens of known shapes, Authorization header values, `Bearer <token>`, and values
 * assigned to secret-named keys (.env files, YAML, JSON pasted as text).
 *
 * These are plain JS regexes (V8 backtracks), kept linear on any input by two rules, see built-in-detectors.ts:
 * every repetition that something after it can make fail is bounded by a small constant, and a match may only
 * start where no character of its own run precedes it (a negative lookbehind), so no run is scanned from more
 * than one start. An unbounded repetition appears only last in its pattern, where nothing can make it give back.
 */

/** Characters of the keys below (base64url and friends). */
const KEY_CHAR = 'A-Za-z0-9_-';

/** Vendor keys and this gateway's own tokens, each recognisable by its prefix. */
const KEY_SHAPES = [
  // OpenAI (sk-..., sk-proj-..., sk-svcacct-..., sk-admin-...), Anthropic (sk-ant-api03-..., sk-ant-admin01-...)
  `sk-[${KEY_CHAR}]{20,}`,
  // Stripe secret and restricted keys
  '(?:sk|rk)_(?:live|test)_[A-Za-z0-9]{16,}',
  // AWS access key ids (long-lived AKIA, temporary ASIA): 20 characters exactly
  '(?:AKIA|ASIA)[A-Z0-9]{16}(?![A-Za-z0-9])',
  // Google API keys: 39 characters exactly
  `AIza[${KEY_CHAR}]{35}(?![${KEY_CHAR}])`,
  // GitHub: personal, OAuth, user-to-server, server-to-server and refresh tokens, fine-grained personal tokens
  'gh[pousr]_[A-Za-z0-9]{36,}',
  'github_pat_[A-Za-z0-9_]{22,}',
  // Slack bot, user, app, refresh and config tokens
  'xox[abprs]-[A-Za-z0-9-]{10,}',
  // This gateway's team tokens and personal admin tokens (src/auth/*token-format.ts)
  TEAM_TOKEN_SHAPE,
  PERSONAL_TOKEN_SHAPE,
];

export const apiKeyDetector: Detector = regexDetector({
  kind: 'api_key',
  pattern: new RegExp(`(?<![${KEY_CHAR}])(?:${KEY_SHAPES.join('|')})`, 'g'),
});

/**
 * JSON Web Tokens: three base64url parts; header and payload are JSON objects, so both start `eyJ` (`{"`). The
 * runs before each dot are unbounded but cannot overlap another start's (lookbehind), so a failing one costs its
 * own length once.
 */
export const jwtDetector: Detector = regexDetector({
  kind: 'jwt',
  pattern: new RegExp(
    `(?<![${KEY_CHAR}])eyJ[${KEY_CHAR}]{8,}\\.eyJ[${KEY_CHAR}]{8,}\\.[${KEY_CHAR}]{8,}`,
    'g',
  ),
  mayContain: (text) => text.includes('eyJ'),
});

/** Authorization schemes whose credentials follow them (RFC 9110 and the common vendor ones). */
const AUTH_SCHEMES = new Set([
  'basic',
  'bearer',
  'digest',
  'token',
  'apikey',
  'api-key',
  'negotiate',
  'ntlm',
  'hawk',
  'aws4-hmac-sha256',
  'sso-key',
]);

/**
 * A random-looking credential rather than a word of prose: long enough and with a digit, an upper-case letter
 * after the first character, or a symbol of base64 and its kin.
 */
export function looksLikeCredential(value: string): boolean {
  return value.length >= 8 && /[0-9+/=._~-]|.[A-Z]/.test(value);
}

/** Credentials already replaced by another detector (`[api_key]`, `[jwt].`) are left as they are. */
const isMarker = (value: string) => /^\[[A-Za-z][\w-]*\]/.test(value);

/**
 * An `Authorization:` (or `Proxy-Authorization:`) header value, in a curl line, a raw request or a log pasted into
 * a prompt: `Authorization: Bearer x` keeps its scheme (`Bearer [bearer_token]`), another scheme's credentials
 * become `[authorization]`. A word of prose after "authorization:" is left alone.
 */
export const authorizationHeaderDetector: Detector = regexDetector({
  kind: 'authorization',
  pattern:
    /\b((?:proxy-)?authorization["']?[ \t]{0,8}[:=][ \t]{0,8}["']?)(?:([A-Za-z][A-Za-z0-9-]{0,30})([ \t]{1,8}))?([^\s"',;]{1,4096})/gi,
  mayContain: (text) => /authorization/i.test(text),
  replace: (match, [label, scheme, gap, credential]) => {
    if (credential === undefined || isMarker(credential)) return match;
    if (scheme === undefined) {
      // One token: the credential itself (no scheme), unless it is only a scheme's name.
      if (AUTH_SCHEMES.has(credential.toLowerCase()) || !looksLikeCredential(credential)) return match;
      return `${label}${markerOf('authorization')}`;
    }
    const known = AUTH_SCHEMES.has(scheme.toLowerCase());
    if (known)
      return `${label}${scheme}${gap}${markerOf(scheme.toLowerCase() === 'bearer' ? 'bearer_token' : 'authorization')}`;
    // Not a scheme: the first token is the value and the second is whatever follows it.
    if (looksLikeCredential(scheme)) return `${label}${markerOf('authorization')}${gap}${credential}`;
    return match;
  },
});

/** `Bearer <token>` anywhere else (a header of another name, a config line, a sentence). */
export const bearerTokenDetector: Detector = regexDetector({
  kind: 'bearer_token',
  pattern: /\b(bearer[ \t]{1,4})([A-Za-z0-9._~+/-]{8,4096}=*)/gi,
  mayContain: (text) => /bearer/i.test(text),
  replace: (match, [prefix, token]) =>
    token !== undefined && looksLikeCredential(token) ? `${prefix}${markerOf('bearer_token')}` : match,
});

/** The words a secret-named key ends with (`DB_PASSWORD`, `client_secret`, `x-api-key`, `GITHUB_TOKEN`). */
const SECRET_WORDS = 'password|passwd|secret|token|api[_-]?key|access[_-]?key|private[_-]?key|credentials?';
const SECRET_NAME = new RegExp(`(?:${SECRET_WORDS})$`, 'i');
/** The shortest value taken for a secret: shorter ones are placeholders and words (`none`, `changeme` is 8). */
const MIN_SECRET_LENGTH = 8;

/**
 * A JSON string under this key is a secret whatever its text (`{"password": "hunter2hunter2"}` in tool-call
 * arguments). `token` alone is not one: it is the field of each OpenAI logprobs entry, a token of the answer.
 */
export function isSecretValueOf(key: string, value: string): boolean {
  return key !== 'token' && SECRET_NAME.test(key) && value.length >= MIN_SECRET_LENGTH && !isMarker(value);
}

/**
 * A value assigned to a secret-named key: `AWS_SECRET_ACCESS_KEY=...`, `DB_PASSWORD: ...`, `"client_secret":
 * "..."`. The name must end with the secret word (`max_tokens: 1024` is not one), and the value must be at least 8
 * characters and not already a marker. Key shapes above catch what they know first; this catches the rest (an AWS
 * secret access key has no shape of its own).
 */
export const secretAssignmentDetector: Detector = regexDetector({
  kind: 'secret',
  pattern: new RegExp(
    `(?<![A-Za-z0-9_.-])([A-Za-z0-9_.-]{0,64}(?:${SECRET_WORDS})["']?[ \\t]{0,4}[:=][ \\t]{0,4}["']?)((?!\\[)[^\\s"'\`,;]{${MIN_SECRET_LENGTH},512})`,
    'gi',
  ),
  replace: (_match, [assignment]) => `${assignment}${markerOf('secret')}`,
});

/** The password in a URL's user info: `postgres://app:<password>@db:5432/app` keeps everything but the password. */
export const urlPasswordDetector: Detector = regexDetector({
  kind: 'password',
  pattern: /\b([a-z][a-z0-9+.-]{0,20}:\/\/[^\s:/@]{1,128}:)([^\s/@]{1,256})@/gi,
  mayContain: (text) => text.includes('://'),
  replace: (match, [prefix, password]) =>
    password === undefined || isMarker(password) ? match : `${prefix}${markerOf('password')}@`,
});
