import { Inject, Injectable } from '@nestjs/common';
import { formatRole, parseRole, type Person, type Role } from '../access/roles';
import { GatewayException } from '../core/errors/gateway.exception';
import { issuePersonalToken, personalTokenIdOf, personalTokenPrefix } from './personal-token-format';
import {
  PERSONAL_TOKEN_RECORDS,
  type PersonalTokenFields,
  type PersonalTokenRecords,
} from './personal-token-records.repository';
import { sameHash, hashToken } from './token-format';

export const PERSONAL_TOKEN_DEFAULT_DAYS = 30;
export const PERSONAL_TOKEN_MAX_DAYS = 90;
/** How long a record outlives its token's expiry (lists show it as expired), then Redis forgets it. */
const KEPT_AFTER_EXPIRY_MS = 7 * 86_400_000;
/** lastUsedAt is written at most this often per token: a write per admin call is not worth it. */
const LAST_USED_EVERY_MS = 60_000;

/** A personal token as the API shows it: never the secret, never the hash. */
export interface PersonalTokenInfo {
  object: 'admin_token';
  id: string;
  subject: string;
  name: string;
  prefix: string;
  status: 'active' | 'revoked' | 'expired';
  createdAt: string;
  expiresAt: string;
  lastUsedAt: string | null;
  revokedAt: string | null;
}

/** What a right, live personal token stands for: its person and the roles of their last sign-in. */
export interface PersonalTokenHolder {
  tokenId: string;
  person: Person;
  /** The roles the identity provider gave at the person's last sign-in (memberships are added per call). */
  signInRoles: Role[];
}

/** A person's last sign-in through the identity provider, as stored. */
interface SignIn {
  person: Person;
  roles: string[];
  at: string;
}

function infoOf(fields: PersonalTokenFields, now = Date.now()): PersonalTokenInfo {
  const expired = Date.parse(fields.expiresAt) <= now;
  return {
    object: 'admin_token',
    id: fields.id,
    subject: fields.subject,
    name: fields.name,
    prefix: personalTokenPrefix(fields.id),
    status: fields.status === 'revoked' ? 'revoked' : expired ? 'expired' : 'active',
    createdAt: fields.createdAt,
    expiresAt: fields.expiresAt,
    lastUsedAt: fields.lastUsedAt || null,
    revokedAt: fields.revokedAt || null,
  };
}

/**
 * Personal admin tokens: a person's own credential for the admin API (scripts, the CLI), acting with that
 * person's current roles. Stored like team tokens (SHA-256 only). A data store and the token's check; audit is
 * the caller's job, counting wrong tokens the throttle's (admin-key-throttle.ts).
 */
@Injectable()
export class PersonalTokens {
  constructor(@Inject(PERSONAL_TOKEN_RECORDS) private readonly records: PersonalTokenRecords) {}

  /** Remembers what the person's sign-in said of them: their tokens act with these roles until the next one. */
  async rememberSignIn(person: Person, roles: readonly Role[]): Promise<void> {
    const signIn: SignIn = { person, roles: roles.map(formatRole), at: new Date().toISOString() };
    await this.records.saveSignIn(person.subject, JSON.stringify(signIn));
  }

  /** Issues a token for the person; the only moment its secret exists outside the caller's hands. */
  async issue(person: Person, name: string, days: number): Promise<PersonalTokenInfo & { token: string }> {
    const issued = issuePersonalToken();
    const now = Date.now();
    const expiresAt = now + days * 86_400_000;
    const fields: PersonalTokenFields = {
      id: issued.id,
      subject: person.subject,
      hash: issued.hash,
      name,
      createdAt: new Date(now).toISOString(),
      expiresAt: new Date(expiresAt).toISOString(),
      status: 'active',
    };
    await this.records.add(person.subject, issued.id, fields, expiresAt + KEPT_AFTER_EXPIRY_MS);
    return { ...infoOf(fields, now), token: issued.token };
  }

  /** The person's tokens, oldest first. */
  async list(subject: string): Promise<PersonalTokenInfo[]> {
    return (await this.records.ofSubject(subject))
      .map((fields) => infoOf(fields))
      .sort((a, b) => a.createdAt.localeCompare(b.createdAt));
  }

  /** Revokes the person's token (404 when the person has no such token: another's is not theirs to name). */
  async revoke(subject: string, id: string): Promise<PersonalTokenInfo> {
    const fields = await this.records.read(id);
    if (!fields.id || fields.subject !== subject)
      throw new GatewayException('token_not_found', `No personal token "${id}" of "${subject}".`);
    if (fields.status !== 'revoked')
      await this.records.writeIfExists(id, { status: 'revoked', revokedAt: new Date().toISOString() });
    return infoOf(await this.records.read(id));
  }

  /**
   * The holder of a presented personal token; null when it is no token of ours (unknown id, wrong secret: a
   * guess, for the throttle to count). A real token that was revoked or has expired is a 401 of its own: whoever
   * sends it held the secret, so it is not counted as a guess.
   */
  async authenticate(presented: string): Promise<PersonalTokenHolder | null> {
    const id = personalTokenIdOf(presented);
    if (!id) return null;
    const fields = await this.records.read(id).catch(unavailable);
    if (!fields.id || !sameHash(hashToken(presented), fields.hash)) return null;
    const now = Date.now();
    if (fields.status === 'revoked')
      throw new GatewayException('invalid_api_key', 'This personal admin token has been revoked.');
    if (Date.parse(fields.expiresAt) <= now)
      throw new GatewayException(
        'invalid_api_key',
        'This personal admin token has expired; sign in to the console and create a new one.',
      );
    if (!fields.lastUsedAt || Date.parse(fields.lastUsedAt) + LAST_USED_EVERY_MS <= now)
      // Off the call's path: a lost write only makes lastUsedAt older.
      void this.records.writeIfExists(id, { lastUsedAt: new Date(now).toISOString() }).catch(() => false);
    const stored = await this.records.signIn(fields.subject).catch(unavailable);
    const signIn = stored ? (JSON.parse(stored) as SignIn) : undefined;
    return {
      tokenId: id,
      person: signIn?.person ?? { subject: fields.subject },
      signInRoles: (signIn?.roles ?? []).flatMap((text) => parseRole(text) ?? []),
    };
  }
}

/** The token store unreachable (Redis down): 503 with Retry-After, never a 500, and no token let through. */
function unavailable(cause: unknown): never {
  throw new GatewayException('auth_unavailable', 'The token store is unreachable; try again shortly.', {
    headers: { 'retry-after': '1' },
    cause,
  });
}
