import { mkdtempSync, readFileSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createPublicKey } from 'node:crypto';
import { exportSPKI, generateKeyPair, SignJWT, type JWTPayload } from 'jose';
import { CLI, run, runCli, stopChild, writeConfig, type RunningProcess } from '../support/gateway-process';
import {
  CLI_CLIENT_ID,
  CLIENT_ID,
  freeProviderPort,
  PROVIDER_HOST,
  TestOidcProvider,
} from '../support/oidc-provider';
import { CookieJar, locationOf, oidcConfig, SSO_USERS } from '../support/sso-flow';
import { OpenAIUpstream } from '../support/openai-upstream';
import { startTestGateway, type TestGateway } from '../support/test-gateway';

type Answer = { status: number; body: any };

/**
 * `switchyard login` end to end: the built CLI (dist/cli/main.js) as a child process with a config folder of its
 * own signs a person in at a real OpenID Provider (the device grant; the loopback redirect where the provider has
 * none), the test playing the person's browser by HTTP; then the CLI's commands go over the admin API as that
 * person, within their roles, and the audit trail names them. The exchange endpoint refuses every ID token it
 * should.
 */
describe('switchyard login (the CLI signed in through SSO)', () => {
  jest.setTimeout(120_000);
  let upstream: OpenAIUpstream;
  let gw: TestGateway;
  let provider: TestOidcProvider;
  /** A gateway whose provider has no device grant: the CLI signs in by the loopback redirect. */
  let loopbackGw: TestGateway;
  let loopbackProvider: TestOidcProvider;
  /** Only for SWITCHYARD_CONFIG, which the signed-in commands never read. */
  const config = writeConfig('admin: { apiKey: unused }\n');
  const children: RunningProcess[] = [];

  beforeAll(async () => {
    upstream = await new OpenAIUpstream().start();
    const withCli = (issuer: string) => ({
      auth: { oidc: { ...oidcConfig(issuer), cli: { clientId: CLI_CLIENT_ID } } },
    });
    const port = await freeProviderPort();
    gw = await startTestGateway({
      upstreamUrl: upstream.url,
      config: withCli(`http://${PROVIDER_HOST}:${port}`),
    });
    provider = await new TestOidcProvider(SSO_USERS).start(`${gw.url}/console/api/sso/callback`, port);
    const loopbackPort = await freeProviderPort();
    loopbackGw = await startTestGateway({
      upstreamUrl: upstream.url,
      config: withCli(`http://${PROVIDER_HOST}:${loopbackPort}`),
    });
    loopbackProvider = await new TestOidcProvider(SSO_USERS).start(
      `${loopbackGw.url}/console/api/sso/callback`,
      loopbackPort,
      { deviceFlow: false },
    );
    await gw.teamToken('team-a');
    await gw.teamToken('team-b');
  });
  afterAll(async () => {
    for (const child of children) await stopChild(child.child);
    await gw?.close();
    await loopbackGw?.close();
    await provider?.stop();
    await loopbackProvider?.stop();
    await upstream?.stop();
  });

  const answer = async (response: Response): Promise<Answer> => {
    const text = await response.text();
    return { status: response.status, body: text ? JSON.parse(text) : undefined };
  };
  const codeOf = (got: Answer) => [got.status, got.body?.error?.code];

  /** Polls the CLI's output for the line that tells the person where to sign in. */
  const signInUrl = async (login: RunningProcess): Promise<URL> => {
    const deadline = Date.now() + 60_000;
    while (Date.now() < deadline) {
      const match = /sign in at (\S+)/.exec(login.output());
      if (match) return new URL(match[1]);
      if (login.child.exitCode !== null) break;
      await new Promise((resolve) => setTimeout(resolve, 25));
    }
    throw new Error(`the CLI printed no sign-in address:\n${login.output()}`);
  };

  /** Follows the provider's redirects (with its cookies) while they stay at the provider. */
  const followAtProvider = async (jar: CookieJar, first: Response, base: URL) => {
    let [response, at] = [first, base];
    while (response.status >= 300 && response.status < 400) {
      const next = locationOf(response, at);
      if (next.host !== at.host) return { response, at, next };
      [response, at] = [await jar.get(next), next];
    }
    return { response, at, next: undefined };
  };
  const post = (jar: CookieJar, url: URL, fields: Record<string, string>) =>
    fetch(url, {
      method: 'POST',
      redirect: 'manual',
      headers: { cookie: jar.header(), 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams(fields),
    }).then((response) => jar.take(response));

  /** The person's browser at the provider: from `start` through the sign-in form as `login`; where it ends. */
  const asPerson = async (start: URL, login: string) => {
    const jar = new CookieJar();
    let { response, at } = await followAtProvider(jar, await jar.get(start), start);
    // The device grant's pages, each a form the browser posts (one submits itself by script): the code (filled in
    // from the CLI's address), then its confirmation. The sign-in form (at /interaction/) is the person's.
    const deviceForm = (html: string) =>
      /<form[^>]*method="post"[^>]*action="([^"]*\/device[^"]*)"/.exec(html)?.[1];
    let html = await response.text();
    for (let action = deviceForm(html); action; action = deviceForm((html = await response.text()))) {
      const target = new URL(action, at);
      const fields = Object.fromEntries(
        [...html.matchAll(/<input[^>]*>/g)].map((input) => [
          /name="([^"]+)"/.exec(input[0])![1],
          /value="([^"]*)"/.exec(input[0])?.[1] ?? '',
        ]),
      );
      ({ response, at } = await followAtProvider(jar, await post(jar, target, fields), target));
    }
    if (!/^\/interaction\/[\w-]+$/.test(at.pathname))
      throw new Error(`no sign-in form at ${at.href}: ${response.status} ${html.slice(0, 2000)}`);
    const loginUrl = new URL(`${at.href}/login`);
    // Signed in: the provider's last redirect leaves it (the loopback's), or its device page says so.
    return followAtProvider(jar, await post(jar, loginUrl, { login }), loginUrl);
  };

  /** A CLI with its own config folder (XDG_CONFIG_HOME): `login` run to the end as `person`, and later commands. */
  const cliAs = async (target: TestGateway, person: string, loginArgs: string[] = []) => {
    const home = mkdtempSync(join(tmpdir(), 'switchyard-login-'));
    const env = { XDG_CONFIG_HOME: home };
    const login = run(config, env, CLI, ['login', '--url', target.url, ...loginArgs]);
    children.push(login);
    const { next } = await asPerson(await signInUrl(login), person);
    // The loopback redirect ends at the CLI's own server on 127.0.0.1: the browser goes there.
    if (next) expect((await fetch(next)).status).toBe(200);
    const code = await login.exit;
    if (code !== 0) throw new Error(`login exited ${code}:\n${login.output()}`);
    const stdout = login
      .output()
      .split('\n')
      .filter((line) => !line.startsWith('switchyard:'))
      .join('\n');
    return {
      home,
      credentialsFile: join(home, 'switchyard', 'credentials.json'),
      signedIn: JSON.parse(stdout.slice(stdout.indexOf('{'))),
      cli: (...args: string[]) => runCli(config, args, env),
    };
  };

  it('signs a team-admin in by the device grant; their commands act as them, audited with subject and email; logout revokes', async () => {
    const dave = await cliAs(gw, 'dave');
    expect(dave.signedIn).toMatchObject({
      gateway: gw.url,
      person: { subject: 'dave', email: 'dave@example.com', name: 'Dave' },
      roles: ['team-admin:team-a'],
    });
    // The token is kept for the gateway, readable by its owner alone.
    expect(statSync(dave.credentialsFile).mode & 0o777).toBe(0o600);
    const stored = JSON.parse(readFileSync(dave.credentialsFile, 'utf8'));
    expect(stored.default).toBe(gw.url);
    expect(stored.gateways[gw.url].token).toMatch(/^sy_admin_/);

    const whoami = await dave.cli('whoami');
    expect(whoami.code).toBe(0);
    expect(JSON.parse(whoami.stdout)).toEqual({
      gateway: gw.url,
      object: 'admin.actor',
      via: 'personal-token',
      person: { subject: 'dave', email: 'dave@example.com', name: 'Dave' },
      roles: ['team-admin:team-a'],
      own_token_teams: ['team-a'], // a team-admin may keep team tokens of their own (tokens:own)
    });

    // A token of his team, made through the admin API as him.
    const made = await dave.cli('tokens', 'create', '--team', 'team-a', '--name', 'from-the-cli');
    expect(made.code).toBe(0);
    const token = JSON.parse(made.stdout);
    expect(token).toMatchObject({
      team: 'team-a',
      name: 'from-the-cli',
      token: expect.stringMatching(/^sy-/),
    });
    const listed = await dave.cli('tokens', 'list', '--team', 'team-a');
    expect(JSON.parse(listed.stdout)).toEqual(
      expect.arrayContaining([expect.objectContaining({ id: token.id })]),
    );
    const audit = await gw.admin('GET', '/admin/v1/audit?limit=50');
    const entry = (action: string, target: (t: string) => boolean) =>
      audit.body.data.find(
        (e: { action: string; target: string }) => e.action === action && target(e.target),
      );
    expect(entry('token.create', (t) => t.endsWith(token.id))).toMatchObject({
      actor: 'personal-token:dave@example.com',
      person: { subject: 'dave', email: 'dave@example.com' },
    });
    expect(
      entry('admin_token.issue', (t) => t === `person/dave/admin-token/${dave.signedIn.tokenId}`),
    ).toMatchObject({
      actor: 'cli:dave@example.com',
      person: { subject: 'dave', email: 'dave@example.com' },
    });

    // Another team's: the API's refusal, and a failing exit.
    const refused = await dave.cli('tokens', 'create', '--team', 'team-b');
    expect(refused.code).not.toBe(0);
    expect(refused.output).toMatch(/403 permission_denied: .+/);

    const logout = await dave.cli('logout');
    expect(JSON.parse(logout.stdout)).toMatchObject({ gateway: gw.url, revoked: true, forgotten: true });
    const gone = await answer(
      await fetch(`${gw.url}/admin/v1/me`, {
        headers: { authorization: `Bearer ${stored.gateways[gw.url].token}` },
      }),
    );
    expect(codeOf(gone)).toEqual([401, 'invalid_api_key']);
    const after = await dave.cli('whoami');
    expect(after.code).not.toBe(0);
    expect(after.output).toMatch(/not signed in/);
    expect(statSync(dave.credentialsFile).mode & 0o777).toBe(0o600);
  });

  it("refuses a team-member creating a token with the API's message and a failing exit; usage is theirs to read", async () => {
    const erin = await cliAs(gw, 'erin');
    expect(erin.signedIn.roles).toEqual(['team-member:team-a']);
    const refused = await erin.cli('tokens', 'create', '--team', 'team-a');
    expect(refused.code).toBe(1);
    expect(refused.output).toMatch(/403 permission_denied: /);
    const usage = await erin.cli('usage', '--team', 'team-a');
    expect(usage.code).toBe(0);
    expect(JSON.parse(usage.stdout)).toMatchObject({ object: 'usage', team: 'team-a' });
  });

  it('signs in by the loopback redirect with PKCE where the provider has no device grant', async () => {
    const carol = await cliAs(loopbackGw, 'carol');
    expect(carol.signedIn).toMatchObject({
      gateway: loopbackGw.url,
      person: { subject: 'carol', email: 'carol@example.com' },
      roles: ['team-admin:team-a', 'org-viewer'],
    });
    const whoami = JSON.parse((await carol.cli('whoami')).stdout);
    expect(whoami).toMatchObject({ via: 'personal-token', person: { subject: 'carol' } });
  });

  describe('POST /console/api/sso/cli-token', () => {
    const now = () => Math.floor(Date.now() / 1000);
    /** Claims of a right ID token for the CLI's client, as the provider would sign them for alice. */
    const claims = (more: JWTPayload = {}): JWTPayload => ({
      iss: provider.issuer,
      aud: CLI_CLIENT_ID,
      sub: 'alice',
      email: 'alice@example.com',
      groups: ['switchyard-admins'],
      iat: now(),
      exp: now() + 600,
      ...more,
    });
    let address = 0;
    /** Each call from an address of its own: the refusals are counted per address, and must not block each other. */
    const exchange = async (idToken: string) =>
      answer(
        await fetch(`${gw.url}/console/api/sso/cli-token`, {
          method: 'POST',
          headers: { 'content-type': 'application/json', 'x-forwarded-for': `198.51.100.${++address}` },
          body: JSON.stringify({ idToken }),
        }),
      );
    const metric = async () => {
      const text = await (await fetch(`${gw.url}/metrics`)).text();
      const line = text
        .split('\n')
        .find((l) =>
          l.startsWith('switchyard_admin_auth_failures_total{surface="cli_sign_in",outcome="rejected"}'),
        );
      return line ? Number(line.split(' ').pop()) : 0;
    };

    it('says where the CLI signs in, and 404 where it is not configured', async () => {
      expect((await answer(await fetch(`${gw.url}/console/api/sso/cli`))).body).toEqual({
        object: 'sso.cli',
        issuer: provider.issuer,
        clientId: CLI_CLIENT_ID,
        scopes: ['openid', 'email', 'profile', 'groups'],
      });
      const plain = await startTestGateway({ upstreamUrl: upstream.url });
      try {
        expect(codeOf(await answer(await fetch(`${plain.url}/console/api/sso/cli`)))).toEqual([
          404,
          'not_found',
        ]);
        const exchanged = await answer(
          await fetch(`${plain.url}/console/api/sso/cli-token`, {
            method: 'POST',
            headers: { 'content-type': 'application/json' },
            body: JSON.stringify({ idToken: 'x' }),
          }),
        );
        expect(codeOf(exchanged)).toEqual([404, 'not_found']);
      } finally {
        await plain.close();
      }
    });

    it('takes a right ID token once; refuses another audience, an expired or old one, an unsigned or forged one, counted as wrong credentials', async () => {
      const before = await metric();
      const right = await provider.sign(claims());
      const issued = await exchange(right);
      expect(issued.status).toBe(201);
      expect(issued.body).toMatchObject({ object: 'admin_token', subject: 'alice', roles: ['org-admin'] });
      expect(
        (await gw.admin('GET', '/admin/v1/audit?action=admin_token.issue&limit=1')).body.data[0],
      ).toMatchObject({
        actor: 'cli:alice@example.com',
        person: { subject: 'alice', email: 'alice@example.com' },
      });

      const refusals = {
        replayed: right,
        'for the console client': await provider.sign(claims({ aud: CLIENT_ID })),
        'for several audiences, issued to another': await provider.sign(
          claims({ aud: [CLI_CLIENT_ID, CLIENT_ID], azp: CLIENT_ID }),
        ),
        expired: await provider.sign(claims({ iat: now() - 700, exp: now() - 100 })),
        'issued 10 minutes ago': await provider.sign(claims({ iat: now() - 600, exp: now() + 600 })),
        'from another issuer': await provider.sign(claims({ iss: 'http://127.0.0.2:1' })),
        unsigned: `${b64({ alg: 'none', typ: 'JWT' })}.${b64(claims())}.`,
        'signed by another key': await forged(claims()),
        "HMAC-signed with the provider's public key": await hmacWithPublicKey(provider.issuer, claims()),
      };
      for (const [what, idToken] of Object.entries(refusals)) {
        const refused = await exchange(idToken);
        expect([what, ...codeOf(refused)]).toEqual([what, 401, 'sso_failed']);
      }
      expect((await metric()) - before).toBe(Object.keys(refusals).length);
      // Nothing was issued for them.
      expect((await gw.admin('GET', '/admin/v1/people/alice/tokens')).body.data).toHaveLength(1);
    });

    it('refuses a person whose groups give no role (403), and a body that is not one', async () => {
      const bob = await exchange(
        await provider.sign(claims({ sub: 'bob', email: 'bob@example.com', groups: ['sales'] })),
      );
      expect(codeOf(bob)).toEqual([403, 'permission_denied']);
      expect(bob.body.error.message).toMatch(/bob@example.com has no role/);
      const wrongBody = await answer(
        await fetch(`${gw.url}/console/api/sso/cli-token`, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify({ idToken: await provider.sign(claims()), expiresInDays: 91 }),
        }),
      );
      expect(wrongBody.status).toBe(400);
    });
  });
});

const b64 = (value: object) => Buffer.from(JSON.stringify(value)).toString('base64url');

/** Claims signed with a key of the test's own, under the provider's key id: what a forger can make. */
async function forged(claims: JWTPayload): Promise<string> {
  const { privateKey } = await generateKeyPair('RS256');
  return new SignJWT(claims).setProtectedHeader({ alg: 'RS256', kid: 'test-key' }).sign(privateKey);
}

/**
 * Claims HMAC-signed with the provider's public key as the secret: what `alg` confusion would let anyone sign. The
 * gateway refuses it twice over: HMAC is not among the algorithms it accepts, and a published key set has no
 * symmetric key for jose to match.
 */
async function hmacWithPublicKey(issuer: string, claims: JWTPayload): Promise<string> {
  const jwks = (await (await fetch(`${issuer}/jwks`)).json()) as { keys: object[] };
  const publicPem = await exportSPKI(createPublicKey({ key: jwks.keys[0] as never, format: 'jwk' }));
  return new SignJWT(claims)
    .setProtectedHeader({ alg: 'HS256', kid: 'test-key' })
    .sign(new TextEncoder().encode(publicPem));
}
