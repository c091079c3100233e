import { decodeJwt, decodeProtectedHeader, exportSPKI, generateKeyPair, SignJWT } from 'jose';
import { createPublicKey } from 'node:crypto';
import { eventually } from '../support/eventually';
import { OpenAIUpstream } from '../support/openai-upstream';
import { CLIENT_ID, freeProviderPort, PROVIDER_HOST, TestOidcProvider } from '../support/oidc-provider';
import { CookieJar, oidcConfig, SSO_USERS, throughProvider } from '../support/sso-flow';
import { startTestGateway, type TestGateway } from '../support/test-gateway';

/**
 * Console sign-in through a real OpenID Provider (oidc-provider, in process), at the HTTP level with redirects
 * followed by hand: a person of a mapped group gets a session with their roles; everything the flow must refuse
 * (no role, a state mismatch, a replayed code, an ID token with the wrong nonce, signed by another key, expired,
 * for another audience, unsigned, HMAC-signed with the public key) gets the console's error, never a 500, and no
 * session.
 */
describe('console sign-in through the identity provider (SSO)', () => {
  jest.setTimeout(60_000);
  let upstream: OpenAIUpstream;
  let gw: TestGateway;
  let provider: TestOidcProvider;

  beforeAll(async () => {
    upstream = await new OpenAIUpstream().start();
    const port = await freeProviderPort();
    // The gateway boots before its provider answers: discovery fails without holding boot up, and the first sign-in
    // tries it again.
    gw = await startTestGateway({
      upstreamUrl: upstream.url,
      config: { auth: { oidc: oidcConfig(`http://${PROVIDER_HOST}:${port}`) } },
    });
    await eventually(() =>
      expect(gw.logs.map((line) => line.msg)).toContain('OpenID Connect discovery failed'),
    );
    provider = await new TestOidcProvider(SSO_USERS).start(`${gw.url}/console/api/sso/callback`, port);
  });
  afterAll(async () => {
    await gw?.close();
    await provider?.stop();
    await upstream?.stop();
  });
  afterEach(() => (provider.tamper = undefined));

  /** The callback sent as the browser would; the response, and the session its cookies (if any) open. */
  const finish = async (jar: CookieJar, callback: URL, accept = 'application/json') => {
    const response = await jar.get(callback, { accept });
    const session = await jar.get(`${gw.url}/console/api/session`);
    return {
      response,
      body: await response.text(),
      session: { status: session.status, body: await session.json() },
    };
  };
  /** A refusal: the status and error code given, no session cookie, and GET /console/api/session says 401. */
  /** Why the gateway refused the last sign-in, as it logged it (the library's own words). */
  const lastRefusal = () =>
    String(
      gw.logs.filter((line) => line.msg === 'console sign-in through the identity provider refused').at(-1)
        ?.reason,
    );
  const expectRefused = (
    result: Awaited<ReturnType<typeof finish>>,
    status: number,
    code: string,
    reason: RegExp,
  ) => {
    expect({ status: result.response.status, code: JSON.parse(result.body).error.code }).toEqual({
      status,
      code,
    });
    expect(result.response.headers.getSetCookie().filter((c) => c.startsWith('sy_console='))).toEqual([]);
    expect(result.session.status).toBe(401);
    expect(lastRefusal()).toMatch(reason);
  };
  /** The ID token's claims, changed and signed again by the provider's own key (so only the change is wrong). */
  const resigned = (change: (claims: Record<string, unknown>) => void) => async (idToken: string) => {
    const claims = decodeJwt(idToken) as Record<string, unknown>;
    change(claims);
    return provider.sign(claims);
  };

  it('signs an org-admin in: a Strict session cookie, the person and roles on the session, the sign-in audited', async () => {
    const { gateway, authorization, callback } = await throughProvider(gw.url, 'alice');
    // The authorization request: code flow, PKCE S256, state and nonce; the flow's cookie is Lax, HttpOnly.
    expect(Object.fromEntries(authorization.searchParams)).toMatchObject({
      response_type: 'code',
      client_id: CLIENT_ID,
      code_challenge_method: 'S256',
      code_challenge: expect.stringMatching(/^[\w-]{43}$/),
      state: expect.stringMatching(/^[\w-]{20,}$/),
      nonce: expect.stringMatching(/^[\w-]{20,}$/),
      redirect_uri: `${gw.url}/console/api/sso/callback`,
    });
    const result = await finish(gateway, callback);
    expect(result.response.status).toBe(302);
    expect(result.response.headers.get('location')).toBe('/console/');
    const sessionCookie = result.response.headers.getSetCookie().find((c) => c.startsWith('sy_console='));
    expect(sessionCookie).toMatch(/; HttpOnly/);
    expect(sessionCookie).toMatch(/; SameSite=Strict/);
    expect(result.session).toEqual({
      status: 200,
      body: expect.objectContaining({
        actor: 'alice@example.com',
        person: { subject: 'alice', email: 'alice@example.com', name: 'Alice <b>Admin</b>' },
        roles: ['org-admin'],
      }),
    });
    const audit = await gw.admin('GET', '/admin/v1/audit?action=console.sign_in');
    expect(audit.body.data[0]).toMatchObject({
      actor: 'console:alice@example.com',
      details: { via: 'sso', subject: 'alice', email: 'alice@example.com', roles: ['org-admin'] },
    });
  });

  it('keeps the flow in a SameSite=Lax, HttpOnly cookie of its own, for the provider’s redirect back', async () => {
    const jar = new CookieJar();
    await jar.get(`${gw.url}/console/api/sso/start?return=/console/%23/teams`);
    expect(jar.lastSet).toEqual([
      expect.stringMatching(
        /^sy_sso_flow=[\w-]{43}; Max-Age=600; Path=\/console\/api\/sso\/; Expires=.*; HttpOnly; SameSite=Lax$/,
      ),
    ]);
  });

  it('gives every role the groups map to, and lands where the sign-in started', async () => {
    // Never elsewhere: another origin, or out of the console, is the console's home instead.
    for (const elsewhere of ['https://evil.example/', '//evil.example/', '/console/../admin/v1/teams']) {
      const flow = await throughProvider(gw.url, 'carol', elsewhere);
      expect((await finish(flow.gateway, flow.callback)).response.headers.get('location')).toBe('/console/');
    }
    const { gateway, callback } = await throughProvider(gw.url, 'carol', '/console/#/teams/team-a');
    const result = await finish(gateway, callback);
    expect(result.response.headers.get('location')).toBe('/console/#/teams/team-a');
    expect((result.session.body as { roles: string[] }).roles).toEqual(['team-admin:team-a', 'org-viewer']);
  });

  it('holds a person signed in through SSO to their roles on the admin API, and names them in the audit trail', async () => {
    await gw.admin('POST', '/admin/v1/teams', { id: 'team-a' });
    await gw.admin('POST', '/admin/v1/teams', { id: 'team-b' });
    // carol: team-admin of team-a and org-viewer, from her groups.
    const { gateway, callback } = await throughProvider(gw.url, 'carol');
    const result = await finish(gateway, callback);
    const csrf = (result.session.body as { csrf_token: string }).csrf_token;
    const call = (method: string, path: string, body?: unknown) =>
      fetch(`${gw.url}${path}`, {
        method,
        headers: {
          cookie: gateway.header(),
          'x-csrf-token': csrf,
          ...(body === undefined ? {} : { 'content-type': 'application/json' }),
        },
        body: body === undefined ? undefined : JSON.stringify(body),
      });
    const codeOf = async (response: Response) => [
      response.status,
      ((await response.json()) as { error?: { code?: string } }).error?.code,
    ];

    expect((await call('GET', '/admin/v1/teams/team-b')).status).toBe(200); // org-viewer reads every team
    expect(await codeOf(await call('POST', '/admin/v1/teams', { id: 'team-c' }))).toEqual([
      403,
      'permission_denied',
    ]);
    expect(await codeOf(await call('POST', '/admin/v1/teams/team-b/tokens', {}))).toEqual([
      403,
      'permission_denied',
    ]);
    const issued = await call('POST', '/admin/v1/teams/team-a/tokens', { name: 'carols-ci' });
    expect(issued.status).toBe(201);
    const audit = await gw.admin('GET', '/admin/v1/audit?target=team/team-a');
    expect(
      audit.body.data.find((entry: { action: string }) => entry.action === 'token.create'),
    ).toMatchObject({
      actor: 'console:carol@example.com',
      person: { subject: 'carol', email: 'carol@example.com' },
    });
  });

  it('refuses a person none of whose groups has a role: 403, no session', async () => {
    const { gateway, callback } = await throughProvider(gw.url, 'bob');
    const result = await finish(gateway, callback);
    expectRefused(result, 403, 'permission_denied', /no role for bob/);
    expect(JSON.parse(result.body).error.message).toMatch(/bob@example.com has no role/);
  });

  it('refuses a state that is not the flow’s', async () => {
    const { gateway, callback } = await throughProvider(gw.url, 'alice');
    callback.searchParams.set('state', 'not-the-state');
    expectRefused(await finish(gateway, callback), 401, 'sso_failed', /unexpected "state"/);
  });

  it('refuses an answer without the browser’s flow cookie', async () => {
    const { callback } = await throughProvider(gw.url, 'alice');
    expectRefused(await finish(new CookieJar(), callback), 401, 'sso_failed', /no flow cookie/);
  });

  it('refuses a replayed authorization code: the same answer again, and the code in another flow', async () => {
    const first = await throughProvider(gw.url, 'alice');
    const flowCookie = first.gateway.header();
    expect((await finish(first.gateway, first.callback)).response.status).toBe(302);
    const again = new CookieJar();
    again.cookies.set('sy_sso_flow', flowCookie.match(/sy_sso_flow=([^;]+)/)![1]);
    expectRefused(await finish(again, first.callback), 401, 'sso_failed', /expired or used already/);
    // The used code with a new flow's own state and cookie: the provider refuses the code itself.
    const second = await throughProvider(gw.url, 'alice');
    const replay = new URL(second.callback);
    replay.searchParams.set('code', first.callback.searchParams.get('code')!);
    expectRefused(await finish(second.gateway, replay), 401, 'sso_failed', /invalid_grant/);
  });

  it('refuses an ID token with another nonce', async () => {
    provider.tamper = resigned((claims) => (claims.nonce = 'another-nonce'));
    const { gateway, callback } = await throughProvider(gw.url, 'alice');
    expectRefused(await finish(gateway, callback), 401, 'sso_failed', /"nonce" claim/);
  });

  it('refuses an ID token signed by another key (under the provider’s key id)', async () => {
    const { privateKey } = await generateKeyPair('RS256');
    provider.tamper = async (idToken) =>
      new SignJWT(decodeJwt(idToken))
        .setProtectedHeader(decodeProtectedHeader(idToken) as { alg: string })
        .sign(privateKey);
    const { gateway, callback } = await throughProvider(gw.url, 'alice');
    expectRefused(await finish(gateway, callback), 401, 'sso_failed', /signature verification failed/);
  });

  it('refuses an expired ID token', async () => {
    provider.tamper = resigned((claims) => {
      claims.iat = Math.floor(Date.now() / 1000) - 7200;
      claims.exp = Math.floor(Date.now() / 1000) - 3600;
    });
    const { gateway, callback } = await throughProvider(gw.url, 'alice');
    expectRefused(await finish(gateway, callback), 401, 'sso_failed', /"exp"/);
  });

  it('refuses an ID token for another audience', async () => {
    provider.tamper = resigned((claims) => {
      claims.aud = 'another-client';
      claims.azp = 'another-client';
    });
    const { gateway, callback } = await throughProvider(gw.url, 'alice');
    expectRefused(await finish(gateway, callback), 401, 'sso_failed', /"aud"/);
  });

  it('refuses an unsigned ID token (alg none)', async () => {
    provider.tamper = (idToken) => {
      const part = (value: unknown) => Buffer.from(JSON.stringify(value)).toString('base64url');
      return `${part({ alg: 'none', typ: 'JWT' })}.${part(decodeJwt(idToken))}.`;
    };
    const { gateway, callback } = await throughProvider(gw.url, 'alice');
    expectRefused(await finish(gateway, callback), 401, 'sso_failed', /"alg" header/);
  });

  it('refuses an ID token HMAC-signed with the provider’s public key', async () => {
    const jwks = (await (await fetch(`${provider.issuer}/jwks`)).json()) as { keys: object[] };
    const publicPem = await exportSPKI(createPublicKey({ key: jwks.keys[0] as never, format: 'jwk' }));
    provider.tamper = (idToken) =>
      new SignJWT(decodeJwt(idToken))
        .setProtectedHeader({ alg: 'HS256', kid: 'test-key' })
        .sign(new TextEncoder().encode(publicPem));
    const { gateway, callback } = await throughProvider(gw.url, 'alice');
    expectRefused(await finish(gateway, callback), 401, 'sso_failed', /"alg" header/);
  });

  it('answers a browser with a page of the same status, the message escaped', async () => {
    const { gateway, callback } = await throughProvider(gw.url, 'bob');
    const result = await finish(gateway, callback, 'text/html,application/xhtml+xml,*/*;q=0.8');
    expect(result.response.status).toBe(403);
    expect(result.response.headers.get('content-type')).toMatch(/^text\/html/);
    expect(result.response.headers.get('content-security-policy')).toMatch(/default-src 'none'/);
    expect(result.body).toContain(
      'bob@example.com has no role in this console: none of their groups (the ID token&#39;s &quot;groups&quot; claim)',
    );
    expect(result.session.status).toBe(401);
  });

  it('says what sign-ins the page offers', async () => {
    const options = await fetch(`${gw.url}/console/api/session/options`);
    expect(await options.json()).toEqual({ object: 'console.sign_in_options', admin_key: true, sso: true });
  });
});

describe('SSO configuration at the edges', () => {
  let upstream: OpenAIUpstream;
  beforeAll(async () => (upstream = await new OpenAIUpstream().start()));
  afterAll(async () => upstream.stop());

  it('a provider that does not answer: the gateway boots, the sign-in says so (503, not a 500)', async () => {
    const port = await freeProviderPort(); // nothing listens there
    const gw = await startTestGateway({
      upstreamUrl: upstream.url,
      config: { auth: { oidc: oidcConfig(`http://${PROVIDER_HOST}:${port}`) } },
    });
    try {
      const start = await fetch(`${gw.url}/console/api/sso/start`, { redirect: 'manual' });
      expect(start.status).toBe(503);
      expect(((await start.json()) as any).error.code).toBe('sso_unavailable');
      const page = await fetch(`${gw.url}/console/api/sso/start`, {
        redirect: 'manual',
        headers: { accept: 'text/html' },
      });
      expect(page.status).toBe(503);
      expect(await page.text()).toContain('The identity provider did not answer');
    } finally {
      await gw.close();
    }
  });

  it('console.adminKeySignIn: false turns the admin-key sign-in off; without auth.oidc there is no SSO', async () => {
    const gw = await startTestGateway({
      upstreamUrl: upstream.url,
      config: { console: { adminKeySignIn: false } },
    });
    try {
      const signIn = await fetch(`${gw.url}/console/api/session`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ adminKey: 'test-admin-key', name: 'someone' }),
      });
      expect(signIn.status).toBe(403);
      expect(signIn.headers.getSetCookie()).toEqual([]);
      const options = await (await fetch(`${gw.url}/console/api/session/options`)).json();
      expect(options).toMatchObject({ admin_key: false, sso: false });
      const start = await fetch(`${gw.url}/console/api/sso/start`, { redirect: 'manual' });
      expect(start.status).toBe(404);
      // The admin API itself still takes the admin key (break-glass for automation).
      expect((await gw.admin('GET', '/admin/v1/teams')).status).toBe(200);
    } finally {
      await gw.close();
    }
  });
});
