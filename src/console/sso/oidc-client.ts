import { types } from 'node:util';
import { Injectable, type OnApplicationBootstrap } from '@nestjs/common';
import type * as OpenIdClient from 'openid-client';
import { AppLogger } from '../../common/logging/logger';
import type { OidcConfig } from '../../config/config.schema';
import { GatewayConfig } from '../../config/config.schema';
import { isLoopback } from '../../config/config.loader';
import { GatewayException } from '../../core/errors/gateway.exception';
import type { IdTokenClaims } from './group-roles';
import type { SsoFlow } from './sso-flows';

/** The log line of every refused SSO sign-in (with its reason). */
export const SIGN_IN_REFUSED = 'console sign-in through the identity provider refused';
/** The log line of a sign-in the provider did not answer (503 sso_unavailable), apart from one it refused. */
export const PROVIDER_DID_NOT_ANSWER = 'console sign-in: the identity provider did not answer';

/** Asymmetric signatures only: an ID token signed with HMAC (keyed with anything public) or `none` is refused. */
export const SIGNATURE_ALGS = [
  'RS256',
  'PS256',
  'ES256',
  'RS384',
  'PS384',
  'ES384',
  'RS512',
  'PS512',
  'ES512',
  'EdDSA',
];

/**
 * The gateway as an OpenID Connect client of auth.oidc's provider, through openid-client (the protocol is not
 * written here). Discovery is started at boot without holding boot up, and tried again at the next sign-in when
 * the provider did not answer.
 */
@Injectable()
export class OidcClient implements OnApplicationBootstrap {
  private readonly oidc?: OidcConfig;
  private discovered?: Promise<OpenIdClient.Configuration>;
  /** openid-client (with jose) is loaded when SSO is configured, not by every gateway at boot. */
  private library?: Promise<typeof OpenIdClient>;

  constructor(
    config: GatewayConfig,
    private readonly logger: AppLogger,
  ) {
    this.oidc = config.auth.oidc;
  }

  get configured(): OidcConfig | undefined {
    return this.oidc;
  }

  onApplicationBootstrap(): void {
    if (this.oidc) this.configuration().catch(() => undefined); // logged there; the next sign-in tries again
  }

  /** A new flow's secrets: the PKCE code verifier, the state and the nonce. */
  async flowSecrets(): Promise<Pick<SsoFlow, 'codeVerifier' | 'state' | 'nonce'>> {
    const client = await this.client();
    return {
      codeVerifier: client.randomPKCECodeVerifier(),
      state: client.randomState(),
      nonce: client.randomNonce(),
    };
  }

  /** The provider's authorization URL for a new flow, with PKCE (S256), state and nonce. */
  async authorizationUrl(flow: SsoFlow): Promise<URL> {
    const config = await this.configuration();
    const client = await this.client();
    return client.buildAuthorizationUrl(config, {
      redirect_uri: flow.redirectUrl,
      scope: this.oidc!.scopes.join(' '),
      code_challenge: await client.calculatePKCECodeChallenge(flow.codeVerifier),
      code_challenge_method: 'S256',
      state: flow.state,
      nonce: flow.nonce,
    });
  }

  /**
   * The provider's answer (the callback's URL) exchanged for tokens, and the ID token's claims once its signature
   * (against the provider's published keys), issuer, audience, expiry and nonce are checked.
   */
  async signedIn(callbackUrl: URL, flow: SsoFlow): Promise<IdTokenClaims> {
    const config = await this.configuration();
    const client = await this.client();
    try {
      const tokens = await client.authorizationCodeGrant(config, callbackUrl, {
        pkceCodeVerifier: flow.codeVerifier,
        expectedState: flow.state,
        expectedNonce: flow.nonce,
        idTokenExpected: true,
      });
      const claims = tokens.claims();
      if (!claims) throw new client.ClientError('the token endpoint answered no ID token');
      return claims as IdTokenClaims;
    } catch (error) {
      throw this.refusal(error);
    }
  }

  /** The provider's discovered metadata (its issuer, its published keys' `jwks_uri`): 503 while it does not answer. */
  async providerMetadata(): Promise<OpenIdClient.ServerMetadata> {
    return (await this.configuration()).serverMetadata();
  }

  private client(): Promise<typeof OpenIdClient> {
    return (this.library ??= import('openid-client'));
  }

  private configuration(): Promise<OpenIdClient.Configuration> {
    this.discovered ??= this.discover().catch((error: unknown) => {
      this.discovered = undefined;
      this.logger.pino.warn(
        { issuer: this.oidc!.issuer, reason: reasonOf(error) },
        'OpenID Connect discovery failed',
      );
      throw new GatewayException(
        'sso_unavailable',
        'The identity provider did not answer; try signing in again in a moment.',
      );
    });
    return this.discovered;
  }

  private async discover(): Promise<OpenIdClient.Configuration> {
    const client = await this.client();
    const oidc = this.oidc!;
    const issuer = new URL(oidc.issuer);
    // Plain http only to a provider on this machine (the loader refuses it elsewhere).
    const insecure = issuer.protocol === 'http:' && isLoopback(issuer.hostname);
    const options = { timeout: 10, execute: insecure ? [client.allowInsecureRequests] : [] };
    const found = await client.discovery(issuer, oidc.clientId, oidc.clientSecret, undefined, options);
    // The client's metadata is fixed once made: make it again with the one signature algorithm it accepts.
    const server = found.serverMetadata();
    const offered = server.id_token_signing_alg_values_supported ?? ['RS256'];
    const alg = offered.includes('RS256') ? 'RS256' : offered.find((a) => SIGNATURE_ALGS.includes(a));
    if (!alg) throw new Error(`the provider signs ID tokens with none of ${SIGNATURE_ALGS.join(', ')}`);
    const methods = server.token_endpoint_auth_methods_supported ?? ['client_secret_basic'];
    const config = new client.Configuration(
      server,
      oidc.clientId,
      { client_secret: oidc.clientSecret, id_token_signed_response_alg: alg },
      methods.includes('client_secret_basic')
        ? client.ClientSecretBasic(oidc.clientSecret)
        : client.ClientSecretPost(oidc.clientSecret),
    );
    config.timeout = options.timeout;
    if (insecure) client.allowInsecureRequests(config);
    // openid-client checks an ID token's signature from the token endpoint only when asked to: ask.
    client.enableNonRepudiationChecks(config);
    return config;
  }

  /** A refused answer is the person's 401; a provider that cannot be reached is a 503. Never a 500. */
  private refusal(error: unknown): GatewayException {
    const unreachable = providerUnreachable(error);
    this.logger.pino.warn(
      { reason: reasonOf(error) },
      unreachable ? PROVIDER_DID_NOT_ANSWER : 'console sign-in through the identity provider refused',
    );
    return unreachable
      ? new GatewayException('sso_unavailable', 'The identity provider did not answer; try signing in again.')
      : new GatewayException(
          'sso_failed',
          "The identity provider's answer could not be verified; start the sign-in again.",
        );
  }
}

/**
 * The provider did not answer (a refused connection, DNS, a reset, the 10 s timeout), as opposed to answering no:
 * fetch's own failure or openid-client's timeout/abort, anywhere down the chain of causes (openid-client wraps a
 * timeout in a ClientError with code OAUTH_TIMEOUT, and wraps a TypeError it does not recognise as its realm's in
 * "something went wrong"). Recognised by name and code, never `instanceof`: undici's TypeError need not be this
 * realm's (cli-id-tokens.ts does the same).
 */
export function providerUnreachable(error: unknown): boolean {
  for (let at: unknown = error, depth = 0; at !== null && typeof at === 'object' && depth < 4; depth++) {
    const { name, code, message, cause } = at as {
      name?: unknown;
      code?: unknown;
      message?: unknown;
      cause?: unknown;
    };
    if (name === 'TypeError' && /fetch failed/.test(String(message))) return true;
    if (name === 'TimeoutError' || name === 'AbortError') return true;
    if (code === 'OAUTH_TIMEOUT' || code === 'OAUTH_ABORT') return true;
    at = cause;
  }
  return false;
}

/** What went wrong, for the log: the library's messages and codes down the chain of causes, never a token. */
function reasonOf(error: unknown): string {
  const parts: string[] = [];
  for (let at: unknown = error, depth = 0; at !== undefined && depth < 4; depth++) {
    // The library's details (claims, a response) are not for the log. An error of another realm (undici's) is one.
    if (!(at instanceof Error) && !types.isNativeError(at)) break;
    const { code, error: oauthError } = at as { code?: unknown; error?: unknown };
    parts.push(
      [at.name, code, oauthError, at.message].filter((part) => typeof part === 'string' && part).join(': '),
    );
    at = at.cause;
  }
  return parts.join(' <- ');
}
