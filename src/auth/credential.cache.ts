import { Inject, Injectable, type OnModuleInit } from '@nestjs/common';
import type Redis from 'ioredis';
import { GatewayException } from '../common/errors/gateway.exception';
import { AppLogger } from '../common/logging/logger';
import { REDIS, REDIS_SUBSCRIBER } from '../redis/redis.module';
import { RedisKeys } from '../redis/redis-keys';
import { parseTeam } from '../teams/team.store';
import type { Principal } from './principal';
import { hashToken, sameHash, tokenIdOf } from './token-format';

interface CachedCredential {
  hash: string;
  status: string;
  teamId: string;
  teamModels: string[];
  teamDisabled: boolean;
}

interface Invalidation {
  tokenId?: string;
  teamId?: string;
}

const MAX_ENTRIES = 100_000;

/**
 * Answers "who is this token?" from memory, so the hot path does not wait on Redis.
 *
 * Correctness rule: the cache is used only while this replica is subscribed to the
 * invalidation channel. Any change (revoke, team edit) is published there and every
 * replica drops the entry at once. If the subscription drops, the cache is cleared
 * and lookups go to Redis until it is back, so a missed message can never leave a
 * revoked token working. A generation counter stops a lookup that raced with an
 * invalidation from re-caching the stale record.
 */
@Injectable()
export class CredentialCache implements OnModuleInit {
  private readonly entries = new Map<string, CachedCredential>();
  private subscribed = false;
  private generation = 0;

  constructor(
    @Inject(REDIS) private readonly redis: Redis,
    @Inject(REDIS_SUBSCRIBER) private readonly subscriber: Redis,
    private readonly keys: RedisKeys,
    private readonly logger: AppLogger,
  ) {}

  async onModuleInit(): Promise<void> {
    const channel = this.keys.invalidationChannel();
    this.subscriber.on('message', (from: string, message: string) => {
      if (from === channel) this.apply(JSON.parse(message) as Invalidation);
    });
    const goDark = () => {
      if (this.subscribed) this.logger.pino.warn('auth invalidation channel lost: credential cache off');
      this.subscribed = false;
      this.clear();
    };
    this.subscriber.on('close', goDark);
    this.subscriber.on('reconnecting', goDark);
    this.subscriber.on('ready', () => void this.subscribe(channel));
    await this.subscribe(channel);
  }

  private async subscribe(channel: string): Promise<void> {
    try {
      await this.subscriber.subscribe(channel);
      this.clear();
      this.subscribed = true;
    } catch (error) {
      this.logger.pino.warn({ err: error }, 'could not subscribe to the auth invalidation channel');
    }
  }

  /** The principal behind a bearer token, or a 401/503 GatewayException. */
  async authenticate(token: string): Promise<Principal> {
    const tokenId = tokenIdOf(token);
    if (!tokenId) throw invalidKey('The bearer token is malformed.');
    const credential = this.entries.get(tokenId) ?? (await this.load(tokenId));
    if (!credential || !sameHash(hashToken(token), credential.hash)) throw invalidKey('The bearer token is not valid.');
    if (credential.status !== 'active') throw invalidKey('The bearer token has been revoked.');
    if (credential.teamDisabled) throw invalidKey('The team of this token is disabled.');
    return { tokenId, teamId: credential.teamId, models: credential.teamModels };
  }

  private async load(tokenId: string): Promise<CachedCredential | null> {
    const generation = this.generation;
    let token: Record<string, string>;
    let teamFields: Record<string, string> = {};
    try {
      token = await this.redis.hgetall(this.keys.token(tokenId));
      if (token.team) teamFields = await this.redis.hgetall(this.keys.team(token.team));
    } catch (error) {
      throw new GatewayException('auth_unavailable', 'The token store is unreachable; try again shortly.', {
        cause: error,
      });
    }
    if (!token.hash) return null;
    const team = parseTeam(teamFields);
    const credential: CachedCredential = {
      hash: token.hash,
      status: token.status,
      teamId: token.team,
      teamModels: team?.models ?? [],
      // A token whose team was deleted is as good as revoked.
      teamDisabled: !team || team.disabled,
    };
    if (this.subscribed && generation === this.generation) {
      if (this.entries.size >= MAX_ENTRIES) this.entries.clear();
      this.entries.set(tokenId, credential);
    }
    return credential;
  }

  /** Drops the entry here and on every other replica. */
  async invalidateEverywhere(change: Invalidation): Promise<void> {
    this.apply(change);
    await this.redis.publish(this.keys.invalidationChannel(), JSON.stringify(change));
  }

  private apply(change: Invalidation): void {
    this.generation++;
    if (change.tokenId) this.entries.delete(change.tokenId);
    if (change.teamId) {
      for (const [id, entry] of this.entries) if (entry.teamId === change.teamId) this.entries.delete(id);
    }
  }

  private clear(): void {
    this.generation++;
    this.entries.clear();
  }
}

function invalidKey(message: string): GatewayException {
  return new GatewayException('invalid_api_key', message);
}
