import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';

/**
 * A team token is `sy-<id>-<secret>`:
 *   id     16 hex chars (64 bits), public and stable: it names the token in logs, lists and the admin API;
 *   secret 43 base64url chars (256 bits), shown once at creation.
 * Redis keeps only SHA-256(token). Fixed lengths make parsing unambiguous even though
 * base64url may contain '-'.
 */
const PREFIX = 'sy-';
const ID_LENGTH = 16;
const SECRET_LENGTH = 43;
/** The shape of a team token, unanchored (the redaction of the request log finds tokens inside text by it). */
export const TEAM_TOKEN_SHAPE = 'sy-[0-9a-f]{16}-[A-Za-z0-9_-]{43}';
const TOKEN_PATTERN = new RegExp(`^${TEAM_TOKEN_SHAPE}$`);

export interface IssuedToken {
  id: string;
  token: string;
  hash: string;
}

/** A new token; pass `id` to mint a new secret for an existing token (rotation). */
export function issueToken(id = randomBytes(ID_LENGTH / 2).toString('hex')): IssuedToken {
  const secret = randomBytes(32).toString('base64url');
  const token = `${PREFIX}${id}-${secret}`;
  return { id, token, hash: hashToken(token) };
}

/** The public id inside a token, or null when the string is not shaped like one of ours. */
export function tokenIdOf(token: string): string | null {
  if (token.length !== PREFIX.length + ID_LENGTH + 1 + SECRET_LENGTH || !TOKEN_PATTERN.test(token))
    return null;
  return token.slice(PREFIX.length, PREFIX.length + ID_LENGTH);
}

/** The part of a token that may be shown in lists: `sy-<id>`. */
export function publicPrefix(id: string): string {
  return `${PREFIX}${id}`;
}

export function hashToken(token: string): string {
  return createHash('sha256').update(token).digest('hex');
}

/** Constant-time comparison of two hex SHA-256 digests. */
export function sameHash(aHex: string, bHex: string): boolean {
  const a = Buffer.from(aHex, 'hex');
  const b = Buffer.from(bHex, 'hex');
  return a.length === 32 && b.length === 32 && timingSafeEqual(a, b);
}

/** `Authorization: Bearer <token>` -> the token, or null when absent or malformed. */
export function bearerToken(header: string | undefined): string | null {
  if (!header) return null;
  const match = /^Bearer\s+(\S+)\s*$/i.exec(header);
  return match ? match[1] : null;
}

/** SHA-256 of a configured secret (admin key, metrics token), for constant-time checks. */
export function secretDigest(secret: string): Buffer {
  return createHash('sha256').update(secret).digest();
}

/** Compares digests so the comparison is constant-time whatever the lengths. */
export function matchesDigest(presented: string, digest: Buffer): boolean {
  return timingSafeEqual(secretDigest(presented), digest);
}
