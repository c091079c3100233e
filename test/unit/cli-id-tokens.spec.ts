import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type Redis from 'ioredis';
import { exportJWK, generateKeyPair, SignJWT, type JWK, type JWTPayload } from 'jose';
import type { AppLogger } from '../../src/common/logging/logger';
import { CliIdTokens } from '../../src/console/sso/cli-id-tokens';
import type { OidcClient } from '../../src/console/sso/oidc-client';
import { GatewayException } from '../../src/core/errors/gateway.exception';
import { RedisKeys } from '../../src/redis/redis-keys';

const ISSUER = 'https://login.example.com';
const CLI = 'switchyard-cli';

/** Redis's SET ... EX ... NX, in memory: what the once-only check relies on. */
class FakeRedis {
  readonly kept = new Map<string, { value: string; ttl: number }>();
  down = false;
  async set(key: string, value: string, _ex: 'EX', ttl: number, _nx: 'NX'): Promise<'OK' | null> {
    if (this.down) throw new Error('connect ECONNREFUSED');
    if (this.kept.has(key)) return null;
    this.kept.set(key, { value, ttl });
    return 'OK';
  }
}

/** The CLI's ID token check against a key set served on a port, a fake provider's metadata and an in-memory Redis. */
describe("the CLI sign-in's ID token check", () => {
  let server: Server;
  let jwksUri = '';
  let privateKey: Awaited<ReturnType<typeof generateKeyPair>>['privateKey'];
  let publicJwk: JWK;
  let redis: FakeRedis;
  let warnings: string[];
  let idTokens: CliIdTokens;

  beforeAll(async () => {
    const pair = await generateKeyPair('ES256', { extractable: true });
    privateKey = pair.privateKey;
    publicJwk = { ...(await exportJWK(pair.publicKey)), kid: 'k1', alg: 'ES256', use: 'sig' };
    server = createServer((_req, res) =>
      res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ keys: [publicJwk] })),
    );
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    jwksUri = `http://127.0.0.1:${(server.address() as AddressInfo).port}/jwks`;
  });
  afterAll(() => new Promise((resolve) => server.close(resolve)));
  beforeEach(() => {
    redis = new FakeRedis();
    warnings = [];
    const oidc = { providerMetadata: async () => ({ issuer: ISSUER, jwks_uri: jwksUri }) };
    const logger = { pino: { warn: (fields: { reason: string }) => warnings.push(fields.reason) } };
    idTokens = new CliIdTokens(
      oidc as unknown as OidcClient,
      redis as unknown as Redis,
      new RedisKeys('t:'),
      logger as unknown as AppLogger,
    );
  });

  const now = () => Math.floor(Date.now() / 1000);
  const sign = (claims: JWTPayload) =>
    new SignJWT({ iss: ISSUER, aud: CLI, sub: 'dave', iat: now(), exp: now() + 600, ...claims })
      .setProtectedHeader({ alg: 'ES256', kid: 'k1' })
      .sign(privateKey);

  it('answers the claims of a right token once, and keeps its hash until it expires (30 s of clock difference more)', async () => {
    const token = await sign({ email: 'dave@example.com' });
    expect(await idTokens.verify(token, CLI)).toMatchObject({ sub: 'dave', email: 'dave@example.com' });
    const [[key, kept]] = [...redis.kept];
    expect(key).toMatch(/^t:console:cli-id-token:[0-9a-f]{64}$/);
    expect(key).not.toContain(token);
    expect(kept.ttl).toBeGreaterThanOrEqual(628);
    expect(kept.ttl).toBeLessThanOrEqual(630);
    expect(await idTokens.verify(token, CLI)).toBeNull();
    expect(warnings).toEqual(['this ID token was exchanged already']);
  });

  it('takes a token of several audiences only when it was issued to the CLI (azp)', async () => {
    expect(await idTokens.verify(await sign({ aud: [CLI, 'other'], azp: CLI }), CLI)).not.toBeNull();
    expect(await idTokens.verify(await sign({ aud: [CLI, 'other'], azp: 'other' }), CLI)).toBeNull();
    expect(await idTokens.verify(await sign({ aud: [CLI, 'other'] }), CLI)).toBeNull();
    expect(warnings).toEqual([expect.stringMatching(/azp "other"/), expect.stringMatching(/azp undefined/)]);
  });

  it('refuses a token without iat, or one issued in the future beyond the clock difference', async () => {
    expect(await idTokens.verify(await sign({ iat: undefined }), CLI)).toBeNull();
    expect(await idTokens.verify(await sign({ iat: now() + 120 }), CLI)).toBeNull();
    expect(await idTokens.verify(await sign({ iat: now() + 10 }), CLI)).not.toBeNull();
  });

  it("is a 503 (not a refusal to count) when the provider's keys or Redis cannot be reached", async () => {
    const unreachable = new CliIdTokens(
      { providerMetadata: async () => ({ issuer: ISSUER, jwks_uri: 'http://127.0.0.1:9/jwks' }) } as never,
      redis as unknown as Redis,
      new RedisKeys('t:'),
      { pino: { warn: () => undefined } } as never,
    );
    await expect(unreachable.verify(await sign({}), CLI)).rejects.toMatchObject({
      code: 'sso_unavailable',
    });
    redis.down = true;
    const refused = idTokens.verify(await sign({}), CLI);
    await expect(refused).rejects.toBeInstanceOf(GatewayException);
    await expect(refused).rejects.toMatchObject({ code: 'auth_unavailable' });
  });
});
