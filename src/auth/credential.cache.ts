import { Inject, Injectable, type BeforeApplicationShutdown, type OnModuleInit } from '@nestjs/common';
import type Redis from 'ioredis';
import { GatewayConfig } from '../config/config.schema';
import { GatewayException } from '../core/errors/gateway.exception';
import { AppLogger } from '../common/logging/logger';
import { REDIS, REDIS_SUBSCRIBER, redisReady } from '../redis/redis.module';
import { RedisKeys } from '../redis/redis-keys';
import { TeamStore } from '../teams/team.store';
import type { Principal } from './principal';
import { toTokenInfo } from './token.store';
import { hashToken, sameHash, tokenIdOf } from './token-format';
import { TOKEN_RECORDS, type TokenRecords } from './token-records.repository';

/** What one token lookup yields; immutable once built, so the principal is shared by requests. */
interface Credential {
  hash: string;
  previousHash?: string;
  /** Epoch ms until which previousHash is accepted (rotation grace). */
  previousHashUntil: number;
  revoked: boolean;
  /** Epoch ms, or Infinity. */
  expiresAt: number;
  teamDisabled: boolean;
  principal: Principal;
}

interface Invalidation {
  tokenId?: string;
  teamId?: string;
}

const MAX_ENTRIES = 100_000;
/** lastUsedAt is written at most this often per token per replica (it is for humans, not billing). */
const LAST_USED_EVERY_MS = 60_000;

/**
 * Answers "who is this token?" from memory, so the hot path does not wait on Redis.
 *
 * Correctness rule: the cache is used only while this replica is subscribed to the
 * invalidation channel. Any change (revoke, rotate, team edit) is published there and
 * every replica drops the entry at once. If the subscription drops, the cache is
 * cleared and lookups go to Redis until it is back, so a missed message can never
 * leave a revoked token working. A generation counter stops a lookup that raced with
 * an invalidation from re-caching the stale record.
 *
 * Outage rule (`auth.onOutage`): when Redis cannot be read, `reject` answers 503;
 * `last-known` accepts what this replica last read from Redis (kept apart from the
 * cache, and still subject to expiry and rotation deadlines, which are timestamps).
 */
@Injectable()
export class CredentialCache implements OnModuleInit, BeforeApplicationShutdown {
  private readonly entries = new Map<string, Credential>();
  private readonly lastKnown = new Map<string, Credential>();
  private readonly lastUsedWritten = new Map<string, number>();
  private subscribed = false;
  private generation = 0;
  private closing = false;

  constructor(
    @Inject(REDIS) private readonly redis: Redis,
    @Inject(REDIS_SUBSCRIBER) private readonly subscriber: Redis,
    private readonly keys: RedisKeys,
    @Inject(TOKEN_RECORDS) private readonly tokens: TokenRecords,
    private readonly teams: TeamStore,
    private readonly logger: AppLogger,
    private readonly config: GatewayConfig,
  ) {}

  async onModuleInit(): Promise<void> {
    const channel = this.keys.invalidationChannel();
    this.subscriber.on('message', (from: string, message: string) => {
      if (from === channel) this.apply(JSON.parse(message) as Invalidation);
    });
    const goDark = () => {
      if (this.subscribed && !this.closing)
        this.logger.pino.warn('auth invalidation channel lost: credential cache off');
      this.subscribed = false;
      this.clear();
    };
    this.subscriber.on('close', goDark);
    this.subscriber.on('reconnecting', goDark);
    this.subscriber.on('ready', () => void this.subscribe(channel));
    await this.subscribe(channel);
  }

  beforeApplicationShutdown(): void {
    this.closing = true;
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
    const now = Date.now();
    if (!credential || !matches(credential, hashToken(token), now))
      throw invalidKey('The bearer token is not valid.');
    if (credential.revoked) throw invalidKey('The bearer token has been revoked.');
    if (now >= credential.expiresAt) {
      throw new GatewayException(
        'token_expired',
        `The bearer token expired at ${new Date(credential.expiresAt).toISOString()}.`,
      );
    }
    if (credential.teamDisabled) throw invalidKey('The team of this token is disabled.');
    this.noteUse(tokenId, now);
    return credential.principal;
  }

  private async load(tokenId: string): Promise<Credential | null> {
    const generation = this.generation;
    let credential: Credential | null;
    try {
      if (!redisReady(this.redis)) throw new Error(`redis is ${this.redis.status}`);
      credential = await this.read(tokenId);
    } catch (error) {
      return this.duringOutage(tokenId, error);
    }
    if (this.subscribed && generation === this.generation) remember(this.entries, tokenId, credential);
    if (this.config.auth.onOutage === 'last-known' && generation === this.generation)
      remember(this.lastKnown, tokenId, credential);
    return credential;
  }

  private async read(tokenId: string): Promise<Credential | null> {
    const token = await this.tokens.read(tokenId);
    if (!token.hash) return null;
    const team = await this.teams.get(token.team);
    const info = toTokenInfo(token);
    return {
      hash: token.hash,
      previousHash: token.previousHash || undefined,
      previousHashUntil: Number(token.previousHashUntil || 0),
      revoked: info.status === 'revoked',
      expiresAt: info.expiresAt ? Date.parse(info.expiresAt) : Infinity,
      // A token whose team was deleted is as good as revoked.
      teamDisabled: !team || team.disabled,
      principal: {
        tokenId,
        teamId: token.team,
        models: team?.models ?? [],
        tokenModels: info.models,
        teamLimits: team?.limits ?? {},
        tokenLimits: info.limits,
        tokenName: info.name,
        owner: info.owner,
        keepsContent: this.keepsContent(team?.logging.content ?? null),
        responseCache: team?.responseCache !== false,
        mcp: team?.mcp,
        tokenMcpTools: info.mcpTools,
      },
    };
  }

  /** The team's content setting, else the organisation's; never when the request log is off. */
  private keepsContent(teamSetting: 'none' | 'full' | null): boolean {
    const requestLog = this.config.logging.requests;
    return requestLog.enabled && (teamSetting ?? requestLog.content) === 'full';
  }

  private duringOutage(tokenId: string, error: unknown): Credential | null {
    if (this.config.auth.onOutage === 'last-known') {
      const known = this.lastKnown.get(tokenId);
      if (known !== undefined) return known;
    }
    throw new GatewayException('auth_unavailable', 'The token store is unreachable; try again shortly.', {
      cause: error,
    });
  }

  /** Records lastUsedAt, throttled, off the request's path. */
  private noteUse(tokenId: string, now: number): void {
    const last = this.lastUsedWritten.get(tokenId) ?? 0;
    if (now - last < LAST_USED_EVERY_MS || !redisReady(this.redis)) return;
    if (this.lastUsedWritten.size >= MAX_ENTRIES) this.lastUsedWritten.clear();
    this.lastUsedWritten.set(tokenId, now);
    this.tokens.writeIfExists(tokenId, { lastUsedAt: new Date(now).toISOString() }).catch(() => {
      this.lastUsedWritten.delete(tokenId);
    });
  }

  /** Drops the entry here and on every other replica. */
  async invalidateEverywhere(change: Invalidation): Promise<void> {
    this.apply(change);
    await this.redis.publish(this.keys.invalidationChannel(), JSON.stringify(change));
  }

  private apply(change: Invalidation): void {
    this.generation++;
    for (const map of [this.entries, this.lastKnown]) {
      if (change.tokenId) map.delete(change.tokenId);
      if (change.teamId) {
        for (const [id, entry] of map) if (entry.principal.teamId === change.teamId) map.delete(id);
      }
    }
  }

  private clear(): void {
    this.generation++;
    this.entries.clear();
  }
}

function matches(credential: Credential, hash: string, now: number): boolean {
  if (sameHash(hash, credential.hash)) return true;
  return (
    credential.previousHash !== undefined &&
    now < credential.previousHashUntil &&
    sameHash(hash, credential.previousHash)
  );
}

function remember(map: Map<string, Credential>, tokenId: string, credential: Credential | null): void {
  if (map.size >= MAX_ENTRIES) map.clear();
  if (credential) map.set(tokenId, credential);
  else map.delete(tokenId);
}

function invalidKey(message: string): GatewayException {
  return new GatewayException('invalid_api_key', message);
}
