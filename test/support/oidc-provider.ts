import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { exportJWK, generateKeyPair, SignJWT, type JWK, type JWTPayload } from 'jose';
import Provider, { type Context } from 'oidc-provider';

/** A person the test provider knows: signing in as `login` gives these claims. */
export interface TestUser {
  login: string;
  email: string;
  name: string;
  groups: string[];
}

/**
 * Loopback address of the provider: not the gateway's 127.0.0.1, so the browser treats the provider as another
 * site (the flow cookie's SameSite=Lax is what carries it back to the gateway, as with a real provider).
 */
export const PROVIDER_HOST = '127.0.0.2';

/** A port free on PROVIDER_HOST now (the gateway is configured with the issuer before the provider starts). */
export async function freeProviderPort(): Promise<number> {
  const probe = createServer();
  await new Promise<void>((resolve) => probe.listen(0, PROVIDER_HOST, resolve));
  const { port } = probe.address() as AddressInfo;
  await new Promise((resolve) => probe.close(resolve));
  return port;
}

export const CLIENT_ID = 'switchyard-console';
export const CLIENT_SECRET = 'test-client-secret-0123456789';
/** The CLI's public client (no secret): the device grant (when the provider has it) and the loopback redirect. */
export const CLI_CLIENT_ID = 'switchyard-cli';
/** The CLI client's registered redirect: a native client's loopback, any port (RFC 8252 7.3). */
export const CLI_REDIRECT_URI = 'http://127.0.0.1/callback';

export interface TestProviderOptions {
  /** The device authorization grant (RFC 8628) on (default) or off, as at a provider that has none. */
  deviceFlow?: boolean;
}

/**
 * A real OpenID Provider for the tests (oidc-provider, OpenID-certified), in process on a port the kernel gives:
 * one confidential client (the console) and one public client (the CLI), the users given, and a sign-in page of its
 * own (a form asking which test user; no password) in place of a real login. With the device grant, the page that
 * confirms a user code is a plain form too (its hidden fields, posted back). `tamper`, when set, rewrites the ID token the token endpoint
 * hands out (forged, expired, wrong audience...); `sign` signs claims with the provider's own key.
 */
export class TestOidcProvider {
  tamper?: (idToken: string) => Promise<string> | string;
  private server?: Server;
  private privateJwk?: JWK;
  issuer = '';

  constructor(private readonly users: TestUser[]) {}

  /** Starts on `port` (0: any) at PROVIDER_HOST, for a client whose only redirect URI is `redirectUri`. */
  async start(redirectUri: string, port = 0, options: TestProviderOptions = {}): Promise<this> {
    const { privateKey } = await generateKeyPair('RS256', { extractable: true });
    this.privateJwk = { ...(await exportJWK(privateKey)), kid: 'test-key', alg: 'RS256', use: 'sig' };
    this.server = createServer();
    await new Promise<void>((resolve) => this.server!.listen(port, PROVIDER_HOST, resolve));
    this.issuer = `http://${PROVIDER_HOST}:${(this.server.address() as AddressInfo).port}`;
    const provider = this.provider(redirectUri, options.deviceFlow ?? true);
    const handle = provider.callback();
    this.server.on('request', (req: IncomingMessage, res: ServerResponse) => {
      const login = /^\/interaction\/([\w-]+)(\/login)?$/.exec(req.url ?? '');
      if (login && req.method === 'GET' && !login[2]) return void loginPage(res, login[1]);
      if (login && req.method === 'POST' && login[2]) return void this.logIn(provider, req, res);
      handle(req, res);
    });
    return this;
  }

  /** Claims signed with the provider's own key (what a tampered-with ID token that still verifies looks like). */
  async sign(claims: JWTPayload, header: { alg: string } = { alg: 'RS256' }): Promise<string> {
    return new SignJWT(claims).setProtectedHeader({ ...header, kid: 'test-key' }).sign(this.privateJwk!);
  }

  async stop(): Promise<void> {
    this.server?.closeAllConnections();
    await new Promise((resolve) => (this.server ? this.server.close(resolve) : resolve(undefined)));
  }

  private provider(redirectUri: string, deviceFlow: boolean): Provider {
    const users = this.users;
    // Its in-memory store is what a test wants; the warning that it is not for production is not.
    const warn = console.warn;
    console.warn = (...args: unknown[]) => void (/in-memory adapter/.test(String(args[0])) || warn(...args));
    const provider = new Provider(this.issuer, {
      ttl: {
        AccessToken: 600,
        DeviceCode: 600,
        AuthorizationCode: 60,
        IdToken: 600,
        Interaction: 600,
        Session: 3600,
        Grant: 3600,
      },
      clients: [
        {
          client_id: CLIENT_ID,
          client_secret: CLIENT_SECRET,
          redirect_uris: [redirectUri],
          grant_types: ['authorization_code'],
          response_types: ['code'],
          token_endpoint_auth_method: 'client_secret_basic',
        },
        {
          client_id: CLI_CLIENT_ID,
          application_type: 'native',
          token_endpoint_auth_method: 'none',
          redirect_uris: [CLI_REDIRECT_URI],
          grant_types: deviceFlow
            ? ['authorization_code', 'urn:ietf:params:oauth:grant-type:device_code']
            : ['authorization_code'],
          response_types: ['code'],
        },
      ],
      jwks: { keys: [this.privateJwk!] },
      cookies: { keys: ['test-cookie-key-0123456789abcdef'] },
      features: {
        devInteractions: { enabled: false },
        deviceFlow: {
          enabled: deviceFlow,
          userCodeConfirmSource: (ctx: Context, form: string, _c: unknown, _d: unknown, userCode: string) => {
            ctx.body = `<!doctype html><title>Confirm</title><p>Code ${userCode}</p>${form}<button type="submit" form="op.deviceConfirmForm">Continue</button>`;
          },
          successSource: (ctx: Context) => {
            ctx.body = '<!doctype html><title>Signed in</title><p>Signed in; back to the terminal.</p>';
          },
        },
      },
      // Offered for other clients, as a lax provider may: the console must still accept only RS256 from this one.
      enabledJWA: { idTokenSigningAlgValues: ['RS256', 'HS256'] },
      pkce: { required: () => true },
      // The person's claims in the ID token itself (as Keycloak's, Entra's, Okta's mappers put them there).
      conformIdTokenClaims: false,
      claims: { openid: ['sub'], email: ['email'], profile: ['name'], groups: ['groups'] },
      scopes: ['openid', 'email', 'profile', 'groups'],
      findAccount: (_ctx, sub) => {
        const user = users.find((u) => u.login === sub);
        return user
          ? {
              accountId: sub,
              claims: () => ({ sub, email: user.email, name: user.name, groups: user.groups }),
            }
          : undefined;
      },
    });
    console.warn = warn;
    provider.use(async (ctx, next) => {
      await next();
      // A provider chooses how often a device may poll (RFC 8628 3.2); 1 s keeps the tests short (the default is 5).
      const device = ctx.body as { device_code?: string; interval?: number } | undefined;
      if (ctx.path === '/device/auth' && device?.device_code) device.interval = 1;
      const body = ctx.body as { id_token?: string } | undefined;
      if (ctx.path === '/token' && this.tamper && body?.id_token)
        body.id_token = await this.tamper(body.id_token);
    });
    return provider;
  }

  /** The test user named in the form signs in and consents to what the client asked, in one step. */
  private async logIn(provider: Provider, req: IncomingMessage, res: ServerResponse): Promise<void> {
    let body = '';
    for await (const chunk of req) body += chunk;
    const login = new URLSearchParams(body).get('login') ?? '';
    const details = await provider.interactionDetails(req, res);
    if (!this.users.some((u) => u.login === login)) {
      res.writeHead(400, { 'content-type': 'text/plain' }).end(`no test user ${login}`);
      return;
    }
    const grant = new provider.Grant({ accountId: login, clientId: String(details.params.client_id) });
    grant.addOIDCScope(String(details.params.scope));
    const grantId = await grant.save();
    await provider.interactionFinished(
      req,
      res,
      { login: { accountId: login }, consent: { grantId } },
      { mergeWithLastSubmission: false },
    );
  }
}

function loginPage(res: ServerResponse, uid: string): void {
  res
    .writeHead(200, { 'content-type': 'text/html; charset=utf-8' })
    .end(
      `<!doctype html><title>Test provider</title><link rel="icon" href="data:,"><form method="post" action="/interaction/${uid}/login">` +
        `<label>Username <input name="login"></label><button type="submit">Log in</button></form>`,
    );
}
