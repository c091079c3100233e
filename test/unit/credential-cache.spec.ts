import { CredentialCache } from '../../src/auth/credential.cache';
import { issueToken } from '../../src/auth/token-format';
import { AppLogger } from '../../src/common/logging/logger';
import { buildConfig } from '../support/config';
import { RedisKeys } from '../../src/redis/redis-keys';
import { RedisTokenRecords } from '../../src/auth/redis-token-records.repository';
import { RedisTeamRecords } from '../../src/teams/redis-team-records.repository';
import { TeamStore } from '../../src/teams/team.store';
import { InMemoryRedis } from '../support/in-memory-redis';

/** A cache on an empty Redis whose log lines go to `lines`. */
function cacheWith(subscriber: InMemoryRedis, config: ReturnType<typeof buildConfig>, lines: string[]) {
  const redis = new InMemoryRedis();
  const keys = new RedisKeys('t:');
  return new CredentialCache(
    redis.asRedis(),
    subscriber.asRedis(),
    keys,
    new RedisTokenRecords(redis.asRedis(), keys),
    new TeamStore(new RedisTeamRecords(redis.asRedis(), keys), config),
    new AppLogger('info', { write: (line: string) => void lines.push(line) }),
    config,
  );
}

/**
 * The credential cache against an in-memory Redis: who a token is, from memory while the invalidation channel is
 * up; revocations and team changes seen at once (here and, through the channel, on other replicas); Redis
 * outages per `auth.onOutage`.
 */
function setup(onOutage: 'reject' | 'last-known' = 'reject', logContent: 'none' | 'full' = 'none') {
  const config = buildConfig(
    { admin: { apiKey: 'k' }, auth: { onOutage }, logging: { requests: { content: logContent } } },
    {},
  );
  const keys = new RedisKeys('t:');
  const redis = new InMemoryRedis();
  const subscriber = new InMemoryRedis();
  const cache = new CredentialCache(
    redis.asRedis(),
    subscriber.asRedis(),
    keys,
    new RedisTokenRecords(redis.asRedis(), keys),
    new TeamStore(new RedisTeamRecords(redis.asRedis(), keys), config),
    new AppLogger('fatal', { write: () => undefined }),
    config,
  );
  const issued = issueToken();
  const tokenKey = keys.token(issued.id);
  redis.hashes.set(tokenKey, {
    id: issued.id,
    team: 'alpha',
    hash: issued.hash,
    status: 'active',
    createdAt: '2026-01-01T00:00:00.000Z',
    limits: '{}',
  });
  redis.hashes.set(keys.team('alpha'), {
    id: 'alpha',
    models: '["m"]',
    createdAt: '2026-01-01T00:00:00.000Z',
  });
  const revoke = () => (redis.hashes.get(tokenKey)!.status = 'revoked');
  const reads = () => redis.commands.filter((c) => c === `hgetall ${tokenKey}`).length;
  /** A message on the invalidation channel, as another replica publishes it. */
  const fromAnotherReplica = (change: object) =>
    subscriber.emit('message', keys.invalidationChannel(), JSON.stringify(change));
  return {
    cache,
    redis,
    subscriber,
    token: issued.token,
    tokenId: issued.id,
    tokenKey,
    revoke,
    reads,
    fromAnotherReplica,
  };
}

const code = (promise: Promise<unknown>) =>
  promise.then(
    () => 'ok',
    (error: { code?: string }) => error.code,
  );

describe('CredentialCache', () => {
  it('answers from memory after the first lookup while subscribed', async () => {
    const { cache, token, reads } = setup();
    await cache.onModuleInit();
    await expect(cache.authenticate(token)).resolves.toMatchObject({ teamId: 'alpha', models: ['m'] });
    await cache.authenticate(token);
    expect(reads()).toBe(1);
  });

  it('reads Redis every time while not subscribed (a missed invalidation could leave a revoked token working)', async () => {
    const { cache, token, reads } = setup();
    await cache.authenticate(token); // no onModuleInit: never subscribed
    await cache.authenticate(token);
    expect(reads()).toBe(2);
  });

  it('a revocation published by another replica is seen at once', async () => {
    const { cache, token, tokenId, revoke, fromAnotherReplica } = setup();
    await cache.onModuleInit();
    expect(await code(cache.authenticate(token))).toBe('ok');
    revoke();
    fromAnotherReplica({ tokenId });
    expect(await code(cache.authenticate(token))).toBe('invalid_api_key');
  });

  it('a team change drops every cached token of that team, and only those', async () => {
    const { cache, token, reads, fromAnotherReplica } = setup();
    await cache.onModuleInit();
    await cache.authenticate(token);
    fromAnotherReplica({ teamId: 'beta' });
    await cache.authenticate(token);
    expect(reads()).toBe(1);
    fromAnotherReplica({ teamId: 'alpha' });
    await cache.authenticate(token);
    expect(reads()).toBe(2);
  });

  it('losing the subscription clears the cache', async () => {
    const { cache, token, reads, subscriber } = setup();
    await cache.onModuleInit();
    await cache.authenticate(token);
    subscriber.emit('close');
    await cache.authenticate(token);
    expect(reads()).toBe(2);
  });

  it('a lookup that raced with an invalidation does not cache what it read before it', async () => {
    const { cache, redis, token, tokenId, revoke, reads } = setup();
    await cache.onModuleInit();
    const release = redis.holdReads();
    const racing = cache.authenticate(token); // reads the token while it is still active...
    revoke(); // ...then it is revoked and the invalidation arrives before the read's answer
    await cache.invalidateEverywhere({ tokenId });
    release();
    expect(await code(racing)).toBe('ok'); // it was valid when read
    expect(await code(cache.authenticate(token))).toBe('invalid_api_key');
    expect(reads()).toBe(2);
  });

  it('publishes what it invalidates, for the other replicas', async () => {
    const { cache, redis, tokenId } = setup();
    await cache.invalidateEverywhere({ tokenId });
    expect(redis.published).toEqual([['t:auth:invalidate', JSON.stringify({ tokenId })]]);
  });

  describe('during a Redis outage', () => {
    it('`reject` answers auth_unavailable even for a token it saw', async () => {
      const { cache, redis, token, subscriber } = setup('reject');
      await cache.onModuleInit();
      await cache.authenticate(token);
      subscriber.emit('close'); // the outage takes the subscription too: the cache is off
      redis.status = 'reconnecting';
      expect(await code(cache.authenticate(token))).toBe('auth_unavailable');
    });

    it('`last-known` accepts a token it last saw valid', async () => {
      const { cache, redis, token, subscriber } = setup('last-known');
      await cache.onModuleInit();
      await cache.authenticate(token);
      subscriber.emit('close');
      redis.status = 'reconnecting';
      expect(await code(cache.authenticate(token))).toBe('ok');
    });

    it('`last-known` does not accept a token revoked before the outage', async () => {
      const { cache, redis, token, tokenId, revoke, subscriber } = setup('last-known');
      await cache.onModuleInit();
      await cache.authenticate(token);
      revoke();
      await cache.invalidateEverywhere({ tokenId });
      subscriber.emit('close');
      redis.status = 'reconnecting';
      expect(await code(cache.authenticate(token))).toBe('auth_unavailable');
    });

    it('`last-known` does not accept a token of a team changed before the outage', async () => {
      const { cache, redis, token, subscriber, fromAnotherReplica } = setup('last-known');
      await cache.onModuleInit();
      await cache.authenticate(token);
      fromAnotherReplica({ teamId: 'alpha' });
      subscriber.emit('close');
      redis.status = 'reconnecting';
      expect(await code(cache.authenticate(token))).toBe('auth_unavailable');
    });

    it('`last-known` still enforces an expiry that passed during the outage', async () => {
      const { cache, redis, token, tokenKey, subscriber } = setup('last-known');
      const expiresAt = Date.now() + 60_000;
      redis.hashes.get(tokenKey)!.expiresAt = new Date(expiresAt).toISOString();
      await cache.onModuleInit();
      expect(await code(cache.authenticate(token))).toBe('ok');
      subscriber.emit('close');
      redis.status = 'reconnecting';
      const now = jest.spyOn(Date, 'now').mockReturnValue(expiresAt + 1);
      try {
        expect(await code(cache.authenticate(token))).toBe('token_expired');
      } finally {
        now.mockRestore();
      }
    });
  });

  it('refuses a malformed token, a wrong secret and an unknown id without caching a miss as valid', async () => {
    const { cache, token } = setup();
    await cache.onModuleInit();
    expect(await code(cache.authenticate('sy-nope'))).toBe('invalid_api_key');
    expect(await code(cache.authenticate(`${token.slice(0, -1)}${token.endsWith('A') ? 'B' : 'A'}`))).toBe(
      'invalid_api_key',
    );
    expect(await code(cache.authenticate(issueToken().token))).toBe('invalid_api_key');
  });

  it('a lookup that raced with an invalidation is not kept as last-known either', async () => {
    const { cache, redis, token, tokenId, revoke, subscriber } = setup('last-known');
    await cache.onModuleInit();
    const release = redis.holdReads();
    const racing = cache.authenticate(token);
    revoke();
    await cache.invalidateEverywhere({ tokenId });
    release();
    await racing;
    subscriber.emit('close');
    redis.status = 'reconnecting';
    expect(await code(cache.authenticate(token))).toBe('auth_unavailable');
  });

  it('`reject` keeps no last-known credentials at all', async () => {
    const { cache, redis, token } = setup('reject');
    await cache.authenticate(token);
    redis.status = 'reconnecting';
    expect(await code(cache.authenticate(token))).toBe('auth_unavailable');
  });

  it('re-subscribes when the subscriber connection is ready again, starting from an empty cache', async () => {
    const { cache, token, reads, subscriber } = setup();
    await cache.onModuleInit();
    await cache.authenticate(token);
    subscriber.emit('reconnecting');
    subscriber.emit('ready');
    await new Promise((resolve) => setImmediate(resolve));
    expect(subscriber.commands.filter((c) => c.startsWith('subscribe'))).toHaveLength(2);
    await cache.authenticate(token); // read again (the cache was cleared)...
    await cache.authenticate(token); // ...and cached again
    expect(reads()).toBe(2);
  });

  it('a failed subscription leaves the cache off', async () => {
    const { cache, token, reads, subscriber } = setup();
    subscriber.subscribe = () => Promise.reject(new Error('NOPERM'));
    await cache.onModuleInit();
    await cache.authenticate(token);
    await cache.authenticate(token);
    expect(reads()).toBe(2);
  });

  it('refuses a token of a disabled or deleted team, and says when an expired token expired', async () => {
    const { cache, redis, token, tokenKey } = setup();
    redis.hashes.get('t:team:{alpha}')!.disabled = '1';
    expect(await code(cache.authenticate(token))).toBe('invalid_api_key');
    redis.hashes.delete('t:team:{alpha}');
    expect(await code(cache.authenticate(token))).toBe('invalid_api_key');
    redis.hashes.set('t:team:{alpha}', { id: 'alpha', createdAt: '2026-01-01T00:00:00.000Z' });
    redis.hashes.get(tokenKey)!.expiresAt = '2026-01-02T00:00:00.000Z';
    await expect(cache.authenticate(token)).rejects.toMatchObject({
      code: 'token_expired',
      message: 'The bearer token expired at 2026-01-02T00:00:00.000Z.',
    });
  });

  it('accepts the previous secret of a rotated token until its grace period ends', async () => {
    const { cache, redis, token, tokenId, tokenKey } = setup();
    const rotated = issueToken(tokenId);
    const hash = redis.hashes.get(tokenKey)!;
    hash.previousHash = hash.hash;
    hash.hash = rotated.hash;
    hash.previousHashUntil = String(Date.now() + 60_000);
    expect(await code(cache.authenticate(token))).toBe('ok');
    expect(await code(cache.authenticate(rotated.token))).toBe('ok');
    hash.previousHashUntil = String(Date.now() - 1);
    expect(await code(cache.authenticate(token))).toBe('invalid_api_key');
    expect(await code(cache.authenticate(rotated.token))).toBe('ok');
  });

  it('writes lastUsedAt at most once a minute per token, and not while Redis is down', async () => {
    const { cache, redis, token, tokenKey } = setup();
    const start = Date.UTC(2026, 5, 1, 12);
    const now = jest.spyOn(Date, 'now').mockReturnValue(start);
    try {
      await cache.authenticate(token);
      await cache.authenticate(token);
      expect(redis.hashes.get(tokenKey)!.lastUsedAt).toBe(new Date(start).toISOString());
      now.mockReturnValue(start + 59_999);
      await cache.authenticate(token);
      expect(redis.commands.filter((c) => c.startsWith('hsetIfExists'))).toHaveLength(1);
      now.mockReturnValue(start + 60_000);
      await cache.authenticate(token);
      expect(redis.hashes.get(tokenKey)!.lastUsedAt).toBe(new Date(start + 60_000).toISOString());
      expect(redis.commands.filter((c) => c.startsWith('hsetIfExists'))).toHaveLength(2);
    } finally {
      now.mockRestore();
    }
  });

  it('a lastUsedAt write that failed is tried again on the next use', async () => {
    const { cache, redis, token } = setup();
    let failing = true;
    const writes: number[] = [];
    redis.hsetIfExists = async () => {
      writes.push(1);
      if (failing) throw new Error('timeout');
      return 1;
    };
    await cache.authenticate(token);
    await new Promise((resolve) => setImmediate(resolve)); // the failed write's catch ran
    failing = false;
    await cache.authenticate(token);
    expect(writes).toHaveLength(2);
  });
});

describe('CredentialCache: what a refusal says, boundaries, and the channel', () => {
  const refusal = (promise: Promise<unknown>) =>
    promise.then(
      () => 'ok',
      (error: { code?: string; message?: string }) => `${error.code}: ${error.message}`,
    );

  it('each refusal says why, in its own words', async () => {
    const { cache, redis, token, tokenKey, revoke } = setup();
    expect(await refusal(cache.authenticate('sy-nope'))).toBe(
      'invalid_api_key: The bearer token is malformed.',
    );
    expect(await refusal(cache.authenticate(issueToken().token))).toBe(
      'invalid_api_key: The bearer token is not valid.',
    );
    redis.hashes.get('t:team:{alpha}')!.disabled = '1';
    expect(await refusal(cache.authenticate(token))).toBe(
      'invalid_api_key: The team of this token is disabled.',
    );
    revoke();
    expect(await refusal(cache.authenticate(token))).toBe(
      'invalid_api_key: The bearer token has been revoked.',
    );
    redis.hashes.delete(tokenKey);
    redis.status = 'reconnecting';
    expect(await refusal(cache.authenticate(token))).toBe(
      'auth_unavailable: The token store is unreachable; try again shortly.',
    );
  });

  it('a token expires at its exact millisecond; a rotated secret is refused from its exact deadline', async () => {
    const { cache, redis, token, tokenId, tokenKey } = setup();
    const at = Date.UTC(2026, 5, 1, 12);
    const now = jest.spyOn(Date, 'now');
    try {
      redis.hashes.get(tokenKey)!.expiresAt = new Date(at).toISOString();
      now.mockReturnValue(at - 1);
      expect(await code(cache.authenticate(token))).toBe('ok');
      now.mockReturnValue(at);
      expect(await code(cache.authenticate(token))).toBe('token_expired');
      delete redis.hashes.get(tokenKey)!.expiresAt;
      const rotated = issueToken(tokenId);
      const hash = redis.hashes.get(tokenKey)!;
      hash.previousHash = hash.hash;
      hash.hash = rotated.hash;
      hash.previousHashUntil = String(at);
      now.mockReturnValue(at - 1);
      expect(await code(cache.authenticate(token))).toBe('ok');
      now.mockReturnValue(at);
      expect(await code(cache.authenticate(token))).toBe('invalid_api_key');
    } finally {
      now.mockRestore();
    }
  });

  it('the principal carries the token and team, their models and limits, its name and owner', async () => {
    const { cache, redis, token, tokenId, tokenKey } = setup();
    Object.assign(redis.hashes.get(tokenKey)!, {
      models: '["m"]',
      limits: '{"requestsPerMinute":5}',
      name: 'laptop',
      ownerSubject: 'u-42',
      ownerEmail: 'ana@example.com',
    });
    Object.assign(redis.hashes.get('t:team:{alpha}')!, { limits: '{"tokensPerMonth":1000}' });
    await expect(cache.authenticate(token)).resolves.toEqual({
      tokenId,
      teamId: 'alpha',
      models: ['m'],
      tokenModels: ['m'],
      teamLimits: { tokensPerMonth: 1000 },
      tokenLimits: { requestsPerMinute: 5 },
      tokenName: 'laptop',
      owner: { subject: 'u-42', email: 'ana@example.com' },
      keepsContent: false,
      responseCache: true,
      // The team's MCP permissions (none by default) and the token's narrower tools (none: the team's).
      mcp: { servers: [], tools: ['*'] },
      tokenMcpTools: null,
    });
  });

  it("carries the team's response cache setting: on unless the team opted out", async () => {
    const uses = async (stored: string | undefined) => {
      const { cache, redis, token } = setup();
      if (stored !== undefined) redis.hashes.get('t:team:{alpha}')!.responseCache = stored;
      return (await cache.authenticate(token)).responseCache;
    };
    expect(await uses(undefined)).toBe(true); // teams from before the setting
    expect(await uses('1')).toBe(true);
    expect(await uses('0')).toBe(false);
  });

  it("keeps content for the request log by the team's setting, else the organisation's", async () => {
    const keeps = async (org: 'none' | 'full', team: string | undefined) => {
      const { cache, redis, token } = setup('reject', org);
      if (team !== undefined) redis.hashes.get('t:team:{alpha}')!.logContent = team;
      return (await cache.authenticate(token)).keepsContent;
    };
    expect(await keeps('none', undefined)).toBe(false);
    expect(await keeps('full', undefined)).toBe(true);
    expect(await keeps('full', '')).toBe(true); // the team follows the organisation
    expect(await keeps('none', 'full')).toBe(true);
    expect(await keeps('full', 'none')).toBe(false);
  });

  it('messages on other channels of the subscriber connection are not invalidations', async () => {
    const { cache, token, tokenId, reads, subscriber } = setup();
    await cache.onModuleInit();
    await cache.authenticate(token);
    subscriber.emit('message', 't:other-channel', JSON.stringify({ tokenId }));
    await cache.authenticate(token);
    expect(reads()).toBe(1);
  });

  it('losing the channel is logged once as a warning, and not at all during shutdown', async () => {
    const lines: string[] = [];
    const config = buildConfig({ admin: { apiKey: 'k' } }, {});
    const subscriber = new InMemoryRedis();
    const cache = cacheWith(subscriber, config, lines);
    await cache.onModuleInit();
    subscriber.emit('close');
    subscriber.emit('reconnecting'); // already off: nothing more to say
    const lost = lines.filter((line) =>
      line.includes('auth invalidation channel lost: credential cache off'),
    );
    expect(lost).toHaveLength(1);
    expect(JSON.parse(lost[0]).level).toBe(40);
    subscriber.emit('ready');
    await new Promise((resolve) => setImmediate(resolve));
    cache.beforeApplicationShutdown();
    subscriber.emit('close');
    expect(lines.filter((line) => line.includes('channel lost'))).toHaveLength(1);
  });

  it('a failed subscription is logged as a warning', async () => {
    const lines: string[] = [];
    const subscriber = new InMemoryRedis();
    subscriber.subscribe = () => Promise.reject(new Error('NOPERM'));
    const cache = cacheWith(subscriber, buildConfig({ admin: { apiKey: 'k' } }, {}), lines);
    await cache.onModuleInit();
    expect(lines.map((line) => JSON.parse(line))).toEqual([
      expect.objectContaining({
        level: 40,
        msg: 'could not subscribe to the auth invalidation channel',
        err: expect.objectContaining({ message: 'NOPERM' }),
      }),
    ]);
  });

  it('no lastUsedAt write while Redis is not ready', async () => {
    const { cache, redis, token, tokenKey } = setup('last-known');
    await cache.onModuleInit();
    const start = Date.UTC(2026, 5, 1, 12);
    const now = jest.spyOn(Date, 'now').mockReturnValue(start);
    try {
      await cache.authenticate(token); // read and written
      now.mockReturnValue(start + 120_000);
      redis.status = 'reconnecting';
      expect(await code(cache.authenticate(token))).toBe('ok'); // from the cache, Redis down
      expect(redis.commands.filter((c) => c.startsWith('hsetIfExists'))).toHaveLength(1);
      expect(redis.hashes.get(tokenKey)!.lastUsedAt).toBe(new Date(start).toISOString());
    } finally {
      now.mockRestore();
    }
  });
});
