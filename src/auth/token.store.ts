import { Inject, Injectable } from '@nestjs/common';
import { GatewayException } from '../core/errors/gateway.exception';
import { cleanLimits, type Limits } from '../core/limit-settings';
import { issueToken, publicPrefix } from './token-format';
import { TOKEN_RECORDS, type TokenRecords } from './token-records.repository';

/**
 * The person a team token belongs to: who issued it for themselves (self-service, docs/api.md). A token issued
 * for the team (by a team-admin or an org-admin on the team's tokens) has none.
 */
export interface TokenOwner {
  subject: string;
  email?: string;
}

export type TokenStatus = 'active' | 'revoked' | 'expired';

/** A token as the admin API shows it: never the secret, never the hash. */
export interface TokenInfo {
  id: string;
  object: 'token';
  team: string;
  name: string | null;
  prefix: string;
  status: TokenStatus;
  createdAt: string;
  lastUsedAt: string | null;
  expiresAt: string | null;
  revokedAt: string | null;
  rotatedAt: string | null;
  /** Narrower than the team's list, or null for "whatever the team may use". */
  models: string[] | null;
  /** Narrower than the team's MCP tool globs (over `<server>__<tool>`), or null for all the team's. */
  mcpTools: string[] | null;
  limits: Limits;
  /** The person who keeps it, or null for a token of the team's. */
  owner: TokenOwner | null;
}

export interface NewToken {
  name?: string;
  expiresAt?: Date;
  models?: string[];
  mcpTools?: string[];
  limits?: Limits;
  owner?: TokenOwner;
}

export function toTokenInfo(fields: Record<string, string>, now = Date.now()): TokenInfo {
  const expired = fields.expiresAt ? Date.parse(fields.expiresAt) <= now : false;
  return {
    id: fields.id,
    object: 'token',
    team: fields.team,
    name: fields.name || null,
    prefix: publicPrefix(fields.id),
    status: fields.status === 'revoked' ? 'revoked' : expired ? 'expired' : 'active',
    createdAt: fields.createdAt,
    lastUsedAt: fields.lastUsedAt || null,
    expiresAt: fields.expiresAt || null,
    revokedAt: fields.revokedAt || null,
    rotatedAt: fields.rotatedAt || null,
    models: fields.models ? (JSON.parse(fields.models) as string[]) : null,
    mcpTools: fields.mcpTools ? (JSON.parse(fields.mcpTools) as string[]) : null,
    limits: JSON.parse(fields.limits || '{}') as Limits,
    owner: fields.ownerSubject
      ? { subject: fields.ownerSubject, ...(fields.ownerEmail ? { email: fields.ownerEmail } : {}) }
      : null,
  };
}

/**
 * Team tokens (TokenRecords: Redis in production): a record holds SHA-256 of the token, never the token.
 * During a rotation grace period it also holds the previous hash and when it stops
 * working. A data store only: audit and invalidation are the admin service's job.
 */
@Injectable()
export class TokenStore {
  constructor(@Inject(TOKEN_RECORDS) private readonly records: TokenRecords) {}

  /** Issues a token; the only moment its secret exists outside the caller's hands. */
  async create(teamId: string, spec: NewToken): Promise<TokenInfo & { token: string }> {
    const issued = issueToken();
    const fields: Record<string, string> = {
      id: issued.id,
      team: teamId,
      hash: issued.hash,
      name: spec.name ?? '',
      createdAt: new Date().toISOString(),
      expiresAt: spec.expiresAt ? spec.expiresAt.toISOString() : '',
      models: spec.models ? JSON.stringify(spec.models) : '',
      mcpTools: spec.mcpTools ? JSON.stringify(spec.mcpTools) : '',
      limits: JSON.stringify(cleanLimits(spec.limits)),
      status: 'active',
      ...(spec.owner ? { ownerSubject: spec.owner.subject, ownerEmail: spec.owner.email ?? '' } : {}),
    };
    await this.records.add(teamId, issued.id, fields);
    return { ...toTokenInfo(fields), token: issued.token };
  }

  async require(tokenId: string): Promise<TokenInfo> {
    const fields = await this.records.read(tokenId);
    if (!fields.id) throw new GatewayException('token_not_found', `Token "${tokenId}" does not exist.`);
    return toTokenInfo(fields);
  }

  async ids(teamId: string): Promise<string[]> {
    return this.records.idsOf(teamId);
  }

  async list(teamId: string): Promise<TokenInfo[]> {
    const ids = (await this.ids(teamId)).sort();
    return (await this.records.readMany(ids))
      .filter((fields) => fields.id)
      .map((fields) => toTokenInfo(fields))
      .sort((a, b) => a.createdAt.localeCompare(b.createdAt));
  }

  async revoke(tokenId: string): Promise<TokenInfo> {
    const info = await this.require(tokenId);
    if (info.status !== 'revoked') {
      await this.records.write(tokenId, {
        status: 'revoked',
        revokedAt: new Date().toISOString(),
      });
    }
    return this.require(tokenId);
  }

  /**
   * A new secret under the same id. The old secret keeps working for `graceSeconds`
   * (0: it stops at once), so clients can be redeployed without an outage.
   */
  async rotate(tokenId: string, graceSeconds: number): Promise<TokenInfo & { token: string }> {
    const fields = await this.records.read(tokenId);
    if (!fields.id) throw new GatewayException('token_not_found', `Token "${tokenId}" does not exist.`);
    if (fields.status === 'revoked') {
      throw new GatewayException(
        'invalid_request',
        `Token "${tokenId}" is revoked; issue a new one instead.`,
        { param: null },
      );
    }
    const issued = issueToken(tokenId);
    const now = Date.now();
    await this.records.write(tokenId, {
      hash: issued.hash,
      previousHash: graceSeconds > 0 ? fields.hash : '',
      previousHashUntil: graceSeconds > 0 ? String(now + graceSeconds * 1000) : '',
      rotatedAt: new Date(now).toISOString(),
    });
    return { ...(await this.require(tokenId)), token: issued.token };
  }

  async touchLastUsed(tokenId: string, at: Date): Promise<void> {
    // Only if the token still exists: a deleted token must not come back as a stub.
    await this.records.writeIfExists(tokenId, { lastUsedAt: at.toISOString() });
  }

  /** Deletes the tokens outright (team deletion). */
  async removeMany(tokenIds: string[]): Promise<void> {
    for (const id of tokenIds) await this.records.remove(id);
  }
}
