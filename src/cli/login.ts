import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type * as OpenIdClient from 'openid-client';
import { isLoopback } from '../config/config.loader';
import { CredentialStore, gatewayUrl } from './credentials';
import { answerOf, callGateway, GatewayRefusal, gatewayTarget } from './gateway-client';

/** What the gateway says about signing in from the CLI (GET /console/api/sso/cli). */
interface CliSignInTarget {
  issuer: string;
  clientId: string;
  scopes: string[];
}

/** What POST /console/api/sso/cli-token answers: the personal token, its person and roles. */
interface IssuedToken {
  id: string;
  token: string;
  expiresAt: string;
  person: { subject: string; email?: string; name?: string };
  roles: string[];
}

export interface LoginOptions {
  url: string;
  /** The loopback redirect even where the provider has the device grant (a provider whose device grant is off). */
  loopback?: boolean;
  /** The token's name in lists (default: `switchyard CLI on <host>`, set by the caller). */
  name?: string;
  expiresInDays?: number;
  /** Where the person is told what to open (stderr): stdout is kept for the JSON result. */
  say: (line: string) => void;
  store?: CredentialStore;
}

/** How long a loopback sign-in waits for the browser's redirect back. */
const LOOPBACK_WAIT_MS = 10 * 60_000;

/**
 * `switchyard login --url <gateway>`: signs the person in at the gateway's identity provider as the CLI's public
 * client (auth.oidc.cli) by the device authorization grant, or by a loopback redirect with PKCE where the provider
 * has no device grant (or with --loopback); exchanges the ID token at the gateway for a personal admin token; keeps
 * it (credentials.ts) for later commands. The protocol is openid-client's, loaded only here.
 */
export async function login(options: LoginOptions) {
  const url = gatewayUrl(options.url);
  const target = (await answerOf(
    await fetch(`${url}/console/api/sso/cli`, { headers: { accept: 'application/json' } }),
  )) as CliSignInTarget;
  const client = await import('openid-client');
  const issuer = new URL(target.issuer);
  // Plain http only to a provider on this machine (as the gateway's loader allows); anywhere else, TLS.
  const insecure = issuer.protocol === 'http:' && isLoopback(issuer.hostname);
  const config = await client.discovery(issuer, target.clientId, undefined, client.None(), {
    timeout: 30,
    execute: insecure ? [client.allowInsecureRequests] : [],
  });
  const scope = target.scopes.join(' ');
  const idToken =
    config.serverMetadata().device_authorization_endpoint && !options.loopback
      ? await byDeviceGrant(client, config, scope, options.say)
      : await byLoopbackRedirect(client, config, scope, options.say);
  const issued = (await answerOf(
    await fetch(`${url}/console/api/sso/cli-token`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/json' },
      body: JSON.stringify({ idToken, name: options.name, expiresInDays: options.expiresInDays }),
    }),
  )) as IssuedToken;
  (options.store ?? new CredentialStore()).save(url, {
    token: issued.token,
    tokenId: issued.id,
    subject: issued.person.subject,
    ...(issued.person.email ? { email: issued.person.email } : {}),
    expiresAt: issued.expiresAt,
  });
  return {
    gateway: url,
    person: issued.person,
    roles: issued.roles,
    tokenId: issued.id,
    expiresAt: issued.expiresAt,
  };
}

/**
 * `switchyard logout`: the stored token revoked at the gateway (already revoked or expired: nothing to revoke) and
 * forgotten here.
 */
export async function logout(flags: { url?: string }, store = new CredentialStore()) {
  const named = flags.url ?? process.env.SWITCHYARD_URL ?? store.defaultUrl();
  if (!named) throw new Error('not signed in to any gateway');
  const url = gatewayUrl(named);
  const stored = store.get(url);
  if (!stored) throw new Error(`not signed in to ${url}`);
  let revoked = true;
  try {
    await callGateway(
      { url, credential: { kind: 'personal-token', token: stored.token } },
      { method: 'DELETE', path: `/admin/v1/me/tokens/${encodeURIComponent(stored.tokenId)}` },
    );
  } catch (error) {
    if (!(error instanceof GatewayRefusal && error.status === 401)) throw error;
    revoked = false; // the gateway no longer takes it: revoked or expired already
  }
  store.forget(url);
  return { gateway: url, tokenId: stored.tokenId, revoked, forgotten: true };
}

/** `switchyard whoami`: who the gateway takes the CLI's credential for (GET /admin/v1/me). */
export async function whoami(flags: { url?: string }) {
  const target = gatewayTarget(flags);
  if (!target) throw new Error('not signed in: run `switchyard login --url <gateway>`');
  return {
    gateway: target.url,
    ...((await callGateway(target, { method: 'GET', path: '/admin/v1/me' })) as object),
  };
}

/** RFC 8628: the person opens the provider's page (on any device) and confirms the code; the CLI polls. */
async function byDeviceGrant(
  client: typeof OpenIdClient,
  config: OpenIdClient.Configuration,
  scope: string,
  say: (line: string) => void,
): Promise<string> {
  const started = await client.initiateDeviceAuthorization(config, { scope });
  say(`sign in at ${started.verification_uri_complete ?? started.verification_uri}`);
  say(`and confirm the code ${started.user_code} (it expires in ${Math.round(started.expires_in / 60)} min)`);
  const tokens = await client.pollDeviceAuthorizationGrant(config, started);
  if (!tokens.id_token)
    throw new Error('the identity provider answered no ID token (is "openid" in the scopes?)');
  return tokens.id_token;
}

/**
 * RFC 8252: the browser is sent to the provider with a redirect to a server of the CLI's on 127.0.0.1 (a port the
 * kernel gives), with PKCE (S256), state and nonce, which openid-client checks when it exchanges the code.
 */
async function byLoopbackRedirect(
  client: typeof OpenIdClient,
  config: OpenIdClient.Configuration,
  scope: string,
  say: (line: string) => void,
): Promise<string> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  try {
    const redirectUri = `http://127.0.0.1:${(server.address() as AddressInfo).port}/callback`;
    const pkceCodeVerifier = client.randomPKCECodeVerifier();
    const expectedState = client.randomState();
    const expectedNonce = client.randomNonce();
    const authorization = client.buildAuthorizationUrl(config, {
      redirect_uri: redirectUri,
      scope,
      code_challenge: await client.calculatePKCECodeChallenge(pkceCodeVerifier),
      code_challenge_method: 'S256',
      state: expectedState,
      nonce: expectedNonce,
    });
    say(`sign in at ${authorization.href}`);
    const callback = await redirectBack(server, redirectUri);
    const tokens = await client.authorizationCodeGrant(config, callback, {
      pkceCodeVerifier,
      expectedState,
      expectedNonce,
      idTokenExpected: true,
    });
    return tokens.id_token!;
  } finally {
    server.closeAllConnections();
    server.close();
  }
}

/** The first request to /callback (the browser sent back by the provider), answered with a page to close. */
function redirectBack(server: Server, redirectUri: string): Promise<URL> {
  return new Promise<URL>((resolve, reject) => {
    const timer = setTimeout(
      () => reject(new Error('nobody came back from the identity provider within 10 minutes')),
      LOOPBACK_WAIT_MS,
    );
    server.on('request', (req, res) => {
      const url = new URL(req.url ?? '/', redirectUri);
      if (url.pathname !== '/callback') return void res.writeHead(404).end();
      res
        .writeHead(200, { 'content-type': 'text/plain; charset=utf-8', connection: 'close' })
        .end('switchyard: signed in at the identity provider; you can close this tab.\n');
      clearTimeout(timer);
      resolve(url);
    });
  });
}
