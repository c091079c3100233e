import type Redis from 'ioredis';
import { REDIS } from '../../src/redis/redis.module';
import { OpenAIUpstream } from '../support/openai-upstream';
import { freeProviderPort, PROVIDER_HOST, TestOidcProvider, type TestUser } from '../support/oidc-provider';
import { oidcConfig, SSO_USERS, throughProvider } from '../support/sso-flow';
import { startTestGateway, type TestGateway } from '../support/test-gateway';

type Answer = { status: number; body: any };

/**
 * Personal admin tokens, end to end: people sign in through a real OpenID Provider, make themselves a token in
 * their console session, and use it on the admin API as themselves, held to their current roles; revoked,
 * expired and guessed tokens are refused, the admin key cannot make one, and the model API never takes one.
 */
describe('personal admin tokens', () => {
  jest.setTimeout(90_000);
  let upstream: OpenAIUpstream;
  let gw: TestGateway;
  let provider: TestOidcProvider;
  /** The provider's people (copies: a test changes carol's groups). */
  const users: TestUser[] = SSO_USERS.map((user) => ({ ...user, groups: [...user.groups] }));

  beforeAll(async () => {
    upstream = await new OpenAIUpstream().start();
    const port = await freeProviderPort();
    gw = await startTestGateway({
      upstreamUrl: upstream.url,
      config: { auth: { oidc: oidcConfig(`http://${PROVIDER_HOST}:${port}`) } },
    });
    provider = await new TestOidcProvider(users).start(`${gw.url}/console/api/sso/callback`, port);
    await gw.teamToken('team-a');
    await gw.teamToken('team-b');
  });
  afterAll(async () => {
    await gw?.close();
    await provider?.stop();
    await upstream?.stop();
  });

  const answer = async (response: Response): Promise<Answer> => {
    const text = await response.text();
    return { status: response.status, body: text ? JSON.parse(text) : undefined };
  };
  /** Signs `login` in through the provider; calls the admin API with the session's cookie and CSRF token. */
  const signIn = async (login: string) => {
    const { gateway, callback } = await throughProvider(gw.url, login);
    const finished = await gateway.get(callback, { accept: 'application/json' });
    const session = await answer(await gateway.get(`${gw.url}/console/api/session`));
    return {
      status: finished.status,
      call: async (method: string, path: string, body?: unknown) =>
        answer(
          await fetch(`${gw.url}${path}`, {
            method,
            headers: {
              cookie: gateway.header(),
              'x-csrf-token': String(session.body?.csrf_token),
              ...(body === undefined ? {} : { 'content-type': 'application/json' }),
            },
            body: body === undefined ? undefined : JSON.stringify(body),
          }),
        ),
    };
  };
  const withToken = async (token: string, method: string, path: string, body?: unknown, from?: string) =>
    answer(
      await fetch(`${gw.url}${path}`, {
        method,
        headers: {
          authorization: `Bearer ${token}`,
          ...(from ? { 'x-forwarded-for': from } : {}),
          ...(body === undefined ? {} : { 'content-type': 'application/json' }),
        },
        body: body === undefined ? undefined : JSON.stringify(body),
      }),
    );
  const codeOf = (got: Answer) => [got.status, got.body?.error?.code];

  it('lets a person signed in through SSO make one, and use it as themselves within their roles', async () => {
    // carol: team-admin of team-a and org-viewer, from her groups.
    const carol = await signIn('carol');
    const made = await carol.call('POST', '/admin/v1/me/tokens', { name: 'laptop', expiresInDays: 7 });
    expect(made.status).toBe(201);
    expect(made.body).toMatchObject({
      object: 'admin_token',
      subject: 'carol',
      name: 'laptop',
      status: 'active',
    });
    expect(made.body.token).toMatch(/^sy_admin_[0-9a-f]{16}_[\w-]{43}$/);
    const token: string = made.body.token;

    expect((await withToken(token, 'GET', '/admin/v1/me')).body).toEqual({
      object: 'admin.actor',
      via: 'personal-token',
      person: { subject: 'carol', email: 'carol@example.com', name: 'Carol' },
      roles: ['team-admin:team-a', 'org-viewer'],
      own_token_teams: ['team-a'],
    });
    expect((await withToken(token, 'GET', '/admin/v1/teams/team-b')).status).toBe(200); // org-viewer reads all
    expect(codeOf(await withToken(token, 'POST', '/admin/v1/teams', { id: 'team-c' }))).toEqual([
      403,
      'permission_denied',
    ]);
    expect(codeOf(await withToken(token, 'POST', '/admin/v1/teams/team-b/tokens', {}))).toEqual([
      403,
      'permission_denied',
    ]);
    expect((await withToken(token, 'POST', '/admin/v1/teams/team-a/tokens', { name: 'ci' })).status).toBe(
      201,
    );

    // The audit trail names her: the change made with the token, and the token's issue.
    const audit = await gw.admin('GET', '/admin/v1/audit?limit=20');
    const entry = (action: string) => audit.body.data.find((e: { action: string }) => e.action === action);
    expect(entry('token.create')).toMatchObject({
      actor: 'personal-token:carol@example.com',
      person: { subject: 'carol', email: 'carol@example.com' },
    });
    expect(entry('admin_token.issue')).toMatchObject({
      actor: 'console:carol@example.com',
      person: { subject: 'carol', email: 'carol@example.com' },
      target: `person/carol/admin-token/${made.body.id}`,
    });

    // Her list shows it, used, never its secret or hash; a token of hers makes another.
    const listed = await withToken(token, 'GET', '/admin/v1/me/tokens');
    expect(listed.body.data).toEqual([
      expect.objectContaining({ id: made.body.id, status: 'active', lastUsedAt: expect.any(String) }),
    ]);
    expect(JSON.stringify(listed.body)).not.toContain(token);
    expect(JSON.stringify(listed.body)).not.toMatch(/hash/i);
    const second = await withToken(token, 'POST', '/admin/v1/me/tokens', { name: 'script' });
    expect(second.status).toBe(201);

    // Revoked by her: 401 from then on, the other still works.
    expect((await withToken(token, 'DELETE', `/admin/v1/me/tokens/${made.body.id}`)).body.status).toBe(
      'revoked',
    );
    const refused = await withToken(token, 'GET', '/admin/v1/me');
    expect(codeOf(refused)).toEqual([401, 'invalid_api_key']);
    expect(refused.body.error.message).toMatch(/revoked/);
    expect((await withToken(second.body.token, 'GET', '/admin/v1/me')).status).toBe(200);
  });

  it('refuses an expired token with 401', async () => {
    const carol = await signIn('carol');
    const made = await carol.call('POST', '/admin/v1/me/tokens', { name: 'old' });
    expect((await withToken(made.body.token, 'GET', '/admin/v1/me')).status).toBe(200);
    const redis = gw.gateway.app.get<Redis>(REDIS);
    await redis.hset(
      `${gw.prefix}admin-token:{${made.body.id}}`,
      'expiresAt',
      new Date(Date.now() - 1000).toISOString(),
    );
    const refused = await withToken(made.body.token, 'GET', '/admin/v1/me');
    expect(codeOf(refused)).toEqual([401, 'invalid_api_key']);
    expect(refused.body.error.message).toMatch(/expired/);
    expect(codeOf(await carol.call('POST', '/admin/v1/me/tokens', { name: 'x', expiresInDays: 91 }))[0]).toBe(
      400,
    );
  });

  it("lets an org-admin list and revoke anyone's, and an org-viewer only list them", async () => {
    const carol = await signIn('carol');
    const made = await carol.call('POST', '/admin/v1/me/tokens', { name: 'to-revoke' });
    const alice = await signIn('alice');
    const aliceToken = (await alice.call('POST', '/admin/v1/me/tokens', { name: 'admin' })).body
      .token as string;
    // carol (org-viewer) lists alice's, may not revoke them; nor can she revoke alice's through /me.
    expect((await withToken(made.body.token, 'GET', '/admin/v1/people/alice/tokens')).body.data).toHaveLength(
      1,
    );
    const aliceId = (await withToken(made.body.token, 'GET', '/admin/v1/people/alice/tokens')).body.data[0]
      .id;
    expect(
      codeOf(await withToken(made.body.token, 'DELETE', `/admin/v1/people/alice/tokens/${aliceId}`)),
    ).toEqual([403, 'permission_denied']);
    expect(codeOf(await withToken(made.body.token, 'DELETE', `/admin/v1/me/tokens/${aliceId}`))).toEqual([
      404,
      'token_not_found',
    ]);
    // alice (org-admin), with her own token, revokes carol's.
    const revoked = await withToken(aliceToken, 'DELETE', `/admin/v1/people/carol/tokens/${made.body.id}`);
    expect(revoked.body).toMatchObject({ id: made.body.id, status: 'revoked' });
    expect(codeOf(await withToken(made.body.token, 'GET', '/admin/v1/me'))).toEqual([401, 'invalid_api_key']);
    const audit = await gw.admin('GET', '/admin/v1/audit?action=admin_token.revoke&limit=1');
    expect(audit.body.data[0]).toMatchObject({
      actor: 'personal-token:alice@example.com',
      person: { subject: 'alice' },
      target: `person/carol/admin-token/${made.body.id}`,
    });
  });

  it('refuses the admin key one (nobody the identity provider knows), and says who it is', async () => {
    const refused = await gw.admin('POST', '/admin/v1/me/tokens', { name: 'break-glass' });
    expect(codeOf(refused)).toEqual([403, 'permission_denied']);
    expect(refused.body.error.message).toMatch(/belong to a person/);
    expect((await gw.admin('GET', '/admin/v1/me')).body).toEqual({
      object: 'admin.actor',
      via: 'admin-key',
      person: null,
      roles: ['org-admin'],
      own_token_teams: [],
    });
  });

  it('holds a token to the roles of its person now: a group taken away at the next sign-in, a membership at once', async () => {
    const carol = await signIn('carol');
    const token = (await carol.call('POST', '/admin/v1/me/tokens', { name: 'roles' })).body.token as string;
    expect((await withToken(token, 'GET', '/admin/v1/teams/team-a/tokens')).status).toBe(200);
    // Her groups are taken away at the provider: the token keeps her roles until she next signs in...
    users.find((user) => user.login === 'carol')!.groups = ['sales'];
    expect((await withToken(token, 'GET', '/admin/v1/teams/team-a/tokens')).status).toBe(200);
    // ...which is refused (no role), and from then on the token stands for nobody.
    expect((await signIn('carol')).status).toBe(403);
    const nobody = await withToken(token, 'GET', '/admin/v1/me');
    expect(codeOf(nobody)).toEqual([403, 'permission_denied']);
    expect(nobody.body.error.message).toMatch(/no role left/);
    // A membership granted now applies at once, and taken away, at once.
    await gw.admin('PUT', '/admin/v1/teams/team-a/members/carol', { role: 'team-member' });
    expect((await withToken(token, 'GET', '/admin/v1/me')).body.roles).toEqual(['team-member:team-a']);
    expect((await withToken(token, 'GET', '/admin/v1/usage?team=team-a')).status).toBe(200);
    expect(codeOf(await withToken(token, 'GET', '/admin/v1/teams/team-a/tokens'))).toEqual([
      403,
      'permission_denied',
    ]);
    await gw.admin('DELETE', '/admin/v1/teams/team-a/members/carol');
    expect(codeOf(await withToken(token, 'GET', '/admin/v1/me'))).toEqual([403, 'permission_denied']);
    users.find((user) => user.login === 'carol')!.groups = [...SSO_USERS[1].groups];
  });

  it('is never a credential on the model API', async () => {
    const alice = await signIn('alice');
    const token = (await alice.call('POST', '/admin/v1/me/tokens', { name: 'model-api' })).body
      .token as string;
    const chat = await withToken(token, 'POST', '/v1/chat/completions', {
      model: 'echo',
      messages: [{ role: 'user', content: 'hi' }],
    });
    expect(codeOf(chat)).toEqual([401, 'invalid_api_key']);
    expect((await withToken(token, 'GET', '/admin/v1/me')).status).toBe(200);
  });

  it('throttles wrong personal tokens per address, with wrong admin keys, and counts them', async () => {
    const metric = async (labels: string) => {
      const text = await (await fetch(`${gw.url}/metrics`)).text();
      const line = text
        .split('\n')
        .find((l) => l.startsWith(`switchyard_admin_auth_failures_total{${labels}}`));
      return line ? Number(line.split(' ').pop()) : 0;
    };
    const alice = await signIn('alice');
    const token = (await alice.call('POST', '/admin/v1/me/tokens', { name: 'guessed' })).body.token as string;
    const from = '203.0.113.77';
    const rejectedBefore = await metric('surface="personal_token",outcome="rejected"');
    const wrong = (i: number) => token.slice(0, -2) + (i < 10 ? `_${i}` : `${i}`);
    for (let i = 0; i < 4; i++)
      expect(codeOf(await withToken(wrong(i), 'GET', '/admin/v1/me', undefined, from))).toEqual([
        401,
        'invalid_api_key',
      ]);
    expect((await withToken('not-the-admin-key', 'GET', '/admin/v1/me', undefined, from)).status).toBe(401);
    const blocked = await withToken(wrong(5), 'GET', '/admin/v1/me', undefined, from);
    expect(codeOf(blocked)).toEqual([429, 'rate_limit_exceeded']);
    // The right token from that address is refused too; from another, it works.
    expect((await withToken(token, 'GET', '/admin/v1/me', undefined, from)).status).toBe(429);
    expect((await withToken(token, 'GET', '/admin/v1/me', undefined, '203.0.113.78')).status).toBe(200);
    expect((await metric('surface="personal_token",outcome="rejected"')) - rejectedBefore).toBe(4);
    expect(await metric('surface="personal_token",outcome="throttled"')).toBe(1);
  });
});
