import { Inject, Injectable } from '@nestjs/common';
import type Redis from 'ioredis';
import type * as Jose from 'jose';
import { hashToken } from '../../auth/token-format';
import { AppLogger } from '../../common/logging/logger';
import { GatewayException } from '../../core/errors/gateway.exception';
import { REDIS } from '../../redis/redis.module';
import { RedisKeys } from '../../redis/redis-keys';
import type { IdTokenClaims } from './group-roles';
import { OidcClient, SIGNATURE_ALGS } from './oidc-client';

/** The log line of every ID token refused at the CLI's sign-in (with its reason). */
export const CLI_SIGN_IN_REFUSED = 'CLI sign-in through the identity provider refused';

/**
 * How old an ID token may be when the CLI hands it over: it comes straight from the provider's token endpoint, so
 * anything older is a token kept (or taken) for later, not a sign-in.
 */
export const CLI_ID_TOKEN_MAX_AGE_SECONDS = 300;
/** Clock difference allowed between the provider and the gateway. */
const CLOCK_TOLERANCE_SECONDS = 30;

/**
 * The ID tokens `switchyard login` exchanges for a personal admin token (docs/sso.md#the-cli-switchyard-login). The CLI got it from
 * the provider itself (device grant or loopback redirect, through openid-client); the gateway checks it again with
 * jose, since it is the gateway that trusts it: the signature against the provider's published keys (asymmetric
 * algorithms only), the issuer, the audience (the CLI's public client, auth.oidc.cli.clientId), the expiry and an
 * `iat` of the last few minutes; and each one is taken once (its SHA-256 kept in Redis until it expires).
 */
@Injectable()
export class CliIdTokens {
  /** jose is loaded at the first CLI sign-in, not by every gateway at boot. */
  private library?: Promise<typeof Jose>;
  private keySet?: { uri: string; keys: ReturnType<typeof Jose.createRemoteJWKSet> };

  constructor(
    private readonly oidc: OidcClient,
    @Inject(REDIS) private readonly redis: Redis,
    private readonly keys: RedisKeys,
    private readonly logger: AppLogger,
  ) {}

  /**
   * The claims of a right, fresh, never-used ID token for the CLI's client; null for any other (forged, expired,
   * old, for another client, unsigned, replayed), its reason logged. A provider that does not answer is a 503.
   */
  async verify(idToken: string, cliClientId: string): Promise<IdTokenClaims | null> {
    const server = await this.oidc.providerMetadata();
    if (!server.jwks_uri) throw unavailable(new Error('the provider publishes no jwks_uri'));
    const jose = await (this.library ??= import('jose'));
    let claims: Jose.JWTPayload;
    try {
      ({ payload: claims } = await jose.jwtVerify(idToken, this.publishedKeys(jose, server.jwks_uri), {
        issuer: server.issuer,
        audience: cliClientId,
        algorithms: SIGNATURE_ALGS,
        maxTokenAge: CLI_ID_TOKEN_MAX_AGE_SECONDS,
        clockTolerance: CLOCK_TOLERANCE_SECONDS,
        requiredClaims: ['sub', 'iat', 'exp'],
      }));
      // OpenID Connect Core 3.1.3.7: with several audiences, the token was issued to the party named in `azp`.
      if (Array.isArray(claims.aud) && claims.aud.length > 1 && claims.azp !== cliClientId)
        throw new Error(`azp ${JSON.stringify(claims.azp)} is not the CLI's client`);
    } catch (error) {
      if (isUnreachable(error)) throw unavailable(error);
      this.refused(error instanceof Error ? `${error.name}: ${error.message}` : String(error));
      return null;
    }
    const keptSeconds = Math.max(
      1,
      (claims.exp ?? 0) - Math.floor(Date.now() / 1000) + CLOCK_TOLERANCE_SECONDS,
    );
    const first = await this.redis
      .set(this.keys.cliIdTokenUsed(hashToken(idToken)), '1', 'EX', keptSeconds, 'NX')
      .catch((cause: unknown) => {
        throw new GatewayException('auth_unavailable', 'The token store is unreachable; try again shortly.', {
          headers: { 'retry-after': '1' },
          cause,
        });
      });
    if (first !== 'OK') {
      this.refused('this ID token was exchanged already');
      return null;
    }
    return claims as IdTokenClaims;
  }

  /** The provider's published keys, fetched when a token names a key not seen yet (jose caches them). */
  private publishedKeys(jose: typeof Jose, uri: string) {
    if (this.keySet?.uri !== uri) this.keySet = { uri, keys: jose.createRemoteJWKSet(new URL(uri)) };
    return this.keySet.keys;
  }

  private refused(reason: string): void {
    this.logger.pino.warn({ reason }, CLI_SIGN_IN_REFUSED);
  }
}

/** The provider's keys could not be fetched: not the caller's fault, and not a guess to count. */
function isUnreachable(error: unknown): boolean {
  const { code, name, message } = (error ?? {}) as { code?: unknown; name?: unknown; message?: unknown };
  // jose's generic error is what its key-set fetch throws for a non-200 answer; its checks have codes of their own.
  return (
    code === 'ERR_JWKS_TIMEOUT' ||
    code === 'ERR_JOSE_GENERIC' ||
    // fetch's own failure (a refused connection, DNS), by name: undici's TypeError is not always this realm's.
    (name === 'TypeError' && /fetch failed/.test(String(message)))
  );
}

function unavailable(cause: unknown): GatewayException {
  return new GatewayException(
    'sso_unavailable',
    "The identity provider's keys could not be read; try again in a moment.",
    { cause },
  );
}
