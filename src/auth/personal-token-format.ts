import { randomBytes } from 'node:crypto';
import { hashToken, type IssuedToken } from './token-format';

/**
 * A personal admin token is `sy_admin_<id>_<secret>`: a prefix of its own (a leaked one is recognisable, and
 * secret scanners can match it apart from team tokens, `sy-<id>-<secret>`), then
 *   id     16 hex chars, public: it names the token in lists, the audit trail and the revoke route;
 *   secret 43 base64url chars (256 bits), shown once at creation.
 * Redis keeps only SHA-256(token). Fixed lengths keep parsing unambiguous although base64url may contain '_'.
 */
export const PERSONAL_TOKEN_PREFIX = 'sy_admin_';
/** The shape of a personal admin token, unanchored (the request log's redaction finds tokens inside text by it). */
export const PERSONAL_TOKEN_SHAPE = 'sy_admin_[0-9a-f]{16}_[A-Za-z0-9_-]{43}';
const PATTERN = /^sy_admin_([0-9a-f]{16})_[A-Za-z0-9_-]{43}$/;

export function issuePersonalToken(): IssuedToken {
  const id = randomBytes(8).toString('hex');
  const token = `${PERSONAL_TOKEN_PREFIX}${id}_${randomBytes(32).toString('base64url')}`;
  return { id, token, hash: hashToken(token) };
}

/** The token's id, or null when the string is not shaped like a personal token. */
export function personalTokenIdOf(token: string): string | null {
  return PATTERN.exec(token)?.[1] ?? null;
}

/** The part that may be shown in lists: `sy_admin_<id>`. */
export function personalTokenPrefix(id: string): string {
  return `${PERSONAL_TOKEN_PREFIX}${id}`;
}
