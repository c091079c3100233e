import { Inject, Injectable } from '@nestjs/common';
import { randomBytes } from 'node:crypto';
import type Redis from 'ioredis';
import { hashToken } from '../../auth/token-format';
import { REDIS } from '../../redis/redis.module';
import { RedisKeys } from '../../redis/redis-keys';

/** What a sign-in through the identity provider must remember between its start and the provider's answer. */
export interface SsoFlow {
  codeVerifier: string;
  state: string;
  nonce: string;
  /** Where the console goes once signed in (a path under /console/). */
  returnTo: string;
  redirectUrl: string;
}

/** How long a person has to sign in at the provider. */
export const SSO_FLOW_TTL_SECONDS = 600;

/**
 * Flows kept in Redis under the SHA-256 of a random id (the flow cookie's value), like console sessions: the PKCE
 * verifier never leaves the server, every replica can finish a flow another started, and taking a flow deletes it
 * (GETDEL), so an answer can be used once.
 */
@Injectable()
export class SsoFlows {
  constructor(
    @Inject(REDIS) private readonly redis: Redis,
    private readonly keys: RedisKeys,
  ) {}

  /** Keeps the flow; answers the id its cookie carries. */
  async begin(flow: SsoFlow): Promise<string> {
    const id = randomBytes(32).toString('base64url');
    await this.redis.set(this.keys.ssoFlow(hashToken(id)), JSON.stringify(flow), 'EX', SSO_FLOW_TTL_SECONDS);
    return id;
  }

  /** The flow the id names, removed as it is read; null when unknown, expired or taken already. */
  async take(id: string): Promise<SsoFlow | null> {
    const stored = await this.redis.getdel(this.keys.ssoFlow(hashToken(id)));
    return stored ? (JSON.parse(stored) as SsoFlow) : null;
  }
}
