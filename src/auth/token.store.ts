import { Inject, Injectable } from '@nestjs/common';
import type Redis from 'ioredis';
import { GatewayException } from '../common/errors/gateway.exception';
import { REDIS } from '../redis/redis.module';
import { RedisKeys } from '../redis/redis-keys';
import { TeamStore } from '../teams/team.store';
import { CredentialCache } from './credential.cache';
import { issueToken, publicPrefix } from './token-format';

export type TokenStatus = 'active' | 'revoked';

/** A token as the admin API shows it: never the secret, never the hash. */
export interface TokenInfo {
  id: string;
  object: 'token';
  team: string;
  name: string | null;
  prefix: string;
  createdAt: string;
  status: TokenStatus;
  revokedAt: string | null;
}

export function toTokenInfo(fields: Record<string, string>): TokenInfo {
  return {
    id: fields.id,
    object: 'token',
    team: fields.team,
    name: fields.name || null,
    prefix: publicPrefix(fields.id),
    createdAt: fields.createdAt,
    status: fields.status as TokenStatus,
    revokedAt: fields.revokedAt || null,
  };
}

/** Team tokens in Redis: `token:{id}` holds the SHA-256 of the token, never the token. */
@Injectable()
export class TokenStore {
  constructor(
    @Inject(REDIS) private readonly redis: Redis,
    private readonly keys: RedisKeys,
    private readonly teams: TeamStore,
    private readonly cache: CredentialCache,
  ) {}

  /** Issues a token; the only moment its secret exists outside the caller's hands. */
  async create(teamId: string, name?: string): Promise<TokenInfo & { token: string }> {
    await this.teams.require(teamId);
    const issued = issueToken();
    const fields = {
      id: issued.id,
      team: teamId,
      hash: issued.hash,
      name: name ?? '',
      createdAt: new Date().toISOString(),
      status: 'active',
    };
    await this.redis
      .pipeline()
      .hset(this.keys.token(issued.id), fields)
      .sadd(this.keys.teamTokens(teamId), issued.id)
      .exec();
    return { ...toTokenInfo(fields), token: issued.token };
  }

  async list(teamId: string): Promise<TokenInfo[]> {
    await this.teams.require(teamId);
    const ids = (await this.redis.smembers(this.keys.teamTokens(teamId))).sort();
    const pipeline = this.redis.pipeline();
    for (const id of ids) pipeline.hgetall(this.keys.token(id));
    const rows = (await pipeline.exec()) ?? [];
    return rows
      .map(([, fields]) => fields as Record<string, string>)
      .filter((fields) => fields.id)
      .map(toTokenInfo)
      .sort((a, b) => a.createdAt.localeCompare(b.createdAt));
  }

  /** Revokes a token and tells every replica to forget it at once. */
  async revoke(tokenId: string): Promise<TokenInfo> {
    const key = this.keys.token(tokenId);
    const fields = await this.redis.hgetall(key);
    if (!fields.id) throw new GatewayException('token_not_found', `Token "${tokenId}" does not exist.`);
    if (fields.status !== 'revoked') {
      fields.status = 'revoked';
      fields.revokedAt = new Date().toISOString();
      await this.redis.hset(key, { status: fields.status, revokedAt: fields.revokedAt });
    }
    await this.cache.invalidateEverywhere({ tokenId });
    return toTokenInfo(fields);
  }
}
