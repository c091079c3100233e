import { eventually, untilPast } from '../support/eventually';
import { OpenAIUpstream } from '../support/openai-upstream';
import { startTestGateway, type TestGateway } from '../support/test-gateway';

const hello = { model: 'echo', messages: [{ role: 'user', content: 'hi' }] };

describe('admin API: teams, tokens, audit', () => {
  let upstream: OpenAIUpstream;
  let gw: TestGateway;

  beforeAll(async () => {
    upstream = await new OpenAIUpstream().start();
    gw = await startTestGateway({ upstreamUrl: upstream.url });
  });
  afterAll(async () => {
    await gw.close();
    await upstream.stop();
  });

  const chat = (token: string, body: object = hello) =>
    gw.asTeam(token, 'POST', '/v1/chat/completions', body);

  it('creates a team with models, limits and metadata; PATCH changes them; unknown fields are refused', async () => {
    const created = await gw.admin('POST', '/admin/v1/teams', {
      id: 'research',
      models: ['echo', 'slow*'],
      limits: { requestsPerMinute: 100, tokensPerDay: 50000 },
      metadata: { owner: 'ana' },
    });
    expect(created.status).toBe(201);
    expect(created.body).toMatchObject({
      object: 'team',
      id: 'research',
      models: ['echo', 'slow*'],
      limits: { requestsPerMinute: 100, tokensPerDay: 50000 },
      metadata: { owner: 'ana' },
      disabled: false,
      selfServiceTokens: false,
    });

    const patched = await gw.admin('PATCH', '/admin/v1/teams/research', {
      limits: { tokensPerMinute: 900 },
      metadata: { owner: 'bo' },
    });
    expect(patched.status).toBe(200);
    expect(patched.body).toMatchObject({
      models: ['echo', 'slow*'],
      limits: { tokensPerMinute: 900 },
      metadata: { owner: 'bo' },
    });
    expect((await gw.admin('GET', '/admin/v1/teams/research')).body).toEqual(patched.body);

    const typo = await gw.admin('PATCH', '/admin/v1/teams/research', { limits: { tokensPerDya: 5 } });
    expect(typo.status).toBe(400);
    expect(typo.body.error).toMatchObject({ type: 'invalid_request_error', param: 'limits.tokensPerDya' });
    const negative = await gw.admin('POST', '/admin/v1/teams', { id: 'neg', limits: { tokensPerDay: 0 } });
    expect(negative.status).toBe(400);
    expect(negative.body.error.param).toBe('limits.tokensPerDay');
    // Above Number.MAX_SAFE_INTEGER a limit is not even stored as written (2^53 + 1 reads as 2^53), nor a budget
    // above what nano-units of the currency count exactly: refused, naming the key, on teams and tokens alike.
    const huge = await gw.admin('PATCH', '/admin/v1/teams/research', {
      limits: { tokensPerDay: 2 ** 53 },
    });
    expect(huge.status).toBe(400);
    expect(huge.body.error).toMatchObject({
      param: 'limits.tokensPerDay',
      message: expect.stringContaining('9007199254740991'),
    });
    const rich = await gw.admin('PATCH', '/admin/v1/teams/research', { limits: { budgetPerMonth: 1e10 } });
    expect(rich.body.error).toMatchObject({ param: 'limits.budgetPerMonth' });
    const token = await gw.admin('POST', '/admin/v1/teams/research/tokens', {
      name: 'huge',
      limits: { requestsPerMinute: 1e300 },
    });
    expect(token.body.error).toMatchObject({ param: 'limits.requestsPerMinute' });
    expect((await gw.admin('PATCH', '/admin/v1/teams/nobody', { models: ['*'] })).status).toBe(404);
  });

  it('PATCH changes only what it names: other limits and labels stay (and stay enforced); null removes one; concurrent PATCHes all land', async () => {
    const team = {
      id: 'patched',
      models: ['echo'],
      limits: { requestsPerMinute: 100, tokensPerDay: 50000 },
      metadata: { owner: 'ana', 'cost-centre': '42' },
    };
    expect((await gw.admin('POST', '/admin/v1/teams', team)).status).toBe(201);
    const { token } = await gw.teamToken('patched');
    const patch = (body: object) => gw.admin('PATCH', '/admin/v1/teams/patched', body);

    const tpm = await patch({ limits: { tokensPerMinute: 900 }, metadata: { owner: 'bo' } });
    expect(tpm.status).toBe(200);
    expect(tpm.body).toMatchObject({
      models: ['echo'],
      limits: { requestsPerMinute: 100, tokensPerDay: 50000, tokensPerMinute: 900 },
      metadata: { owner: 'bo', 'cost-centre': '42' },
    });
    // Still enforced on the request path, not only listed.
    const small = { ...hello, max_tokens: 5 };
    const ok = await chat(token, small);
    expect(ok.status).toBe(200);
    expect(ok.headers.get('x-ratelimit-limit-requests')).toBe('100');
    expect(ok.headers.get('x-ratelimit-limit-tokens')).toBe('900');

    const removed = await patch({ limits: { requestsPerMinute: null }, metadata: { 'cost-centre': null } });
    expect(removed.status).toBe(200);
    expect(removed.body.limits).toEqual({ tokensPerDay: 50000, tokensPerMinute: 900 });
    expect(removed.body.metadata).toEqual({ owner: 'bo' });
    const after = await chat(token, small);
    expect(after.status).toBe(200);
    expect(after.headers.get('x-ratelimit-limit-requests')).toBeNull();

    expect((await patch({ models: ['echo', 'slow'] })).body).toMatchObject({
      models: ['echo', 'slow'],
      limits: { tokensPerDay: 50000, tokensPerMinute: 900 },
      metadata: { owner: 'bo' },
    });
    expect((await patch({ limits: {} })).body.limits).toEqual({ tokensPerDay: 50000, tokensPerMinute: 900 });
    expect((await patch({ limits: null, metadata: null })).body).toMatchObject({ limits: {}, metadata: {} });
    expect((await patch({ metadata: { owner: 5 } })).body.error).toMatchObject({
      type: 'invalid_request_error',
      param: 'metadata',
    });
    expect((await patch({ limits: { tokensPerDay: 0 } })).body.error).toMatchObject({
      param: 'limits.tokensPerDay',
    });
    const tooMany = await patch({
      metadata: Object.fromEntries(Array.from({ length: 64 }, (_, i) => [`k${i}`, 'v'])),
    });
    expect(tooMany.status).toBe(200);
    const overflow = await patch({ metadata: { one: 'more' } });
    expect(overflow.status).toBe(400);
    expect(overflow.body.error.message).toMatch(/at most 64 metadata labels; this change would leave 65/);

    // Seven admins each change one limit at the same moment: every change lands (each is merged into the others).
    const limits = {
      concurrentRequests: 5,
      requestsPerMinute: 60,
      tokensPerMinute: 1000,
      tokensPerDay: 20000,
      tokensPerMonth: 300000,
      budgetPerDay: 2.5,
      budgetPerMonth: 40,
    };
    const results = await Promise.all(
      Object.entries(limits).map(([name, value]) => patch({ limits: { [name]: value } })),
    );
    expect(results.map((r) => r.status)).toEqual(Object.keys(limits).map(() => 200));
    expect((await gw.admin('GET', '/admin/v1/teams/patched')).body.limits).toEqual(limits);
    // The audit trail shows what each change named, nulls included.
    const audit = (await gw.admin('GET', '/admin/v1/audit?target=team/patched&action=team.update&limit=100'))
      .body.data;
    expect(audit.map((entry: any) => entry.details)).toContainEqual({
      limits: { requestsPerMinute: null },
      metadata: { 'cost-centre': null },
    });
  });

  it('disabling a team refuses all its tokens at once; enabling lets them back in', async () => {
    const { token } = await gw.teamToken('disabled-team');
    expect((await chat(token)).status).toBe(200);
    expect((await gw.admin('POST', '/admin/v1/teams/disabled-team/disable')).body.disabled).toBe(true);
    const refused = await chat(token);
    expect(refused.status).toBe(401);
    expect(refused.body.error.message).toMatch(/disabled/);
    await gw.admin('POST', '/admin/v1/teams/disabled-team/enable');
    expect((await chat(token)).status).toBe(200);
  });

  it('deleting a team is refused while it has tokens; force deletes the tokens too', async () => {
    const { token, id } = await gw.teamToken('doomed');
    const refused = await gw.admin('DELETE', '/admin/v1/teams/doomed');
    expect(refused.status).toBe(409);
    expect(refused.body.error).toMatchObject({ code: 'team_has_tokens' });
    const forced = await gw.admin('DELETE', '/admin/v1/teams/doomed?force=true');
    expect(forced.body).toEqual({ id: 'doomed', object: 'team', deleted: true, tokensDeleted: 1 });
    expect((await chat(token)).status).toBe(401);
    expect((await gw.admin('GET', '/admin/v1/teams/doomed')).status).toBe(404);
    expect((await gw.admin('GET', `/admin/v1/tokens/${id}`)).status).toBe(404);
    expect((await gw.admin('GET', '/admin/v1/teams')).body.data.map((t: any) => t.id)).not.toContain(
      'doomed',
    );
    // An empty team is deleted without force.
    await gw.admin('POST', '/admin/v1/teams', { id: 'empty' });
    expect((await gw.admin('DELETE', '/admin/v1/teams/empty')).status).toBe(200);
  });

  it('a team whose tokens are all revoked is deleted without force, its tokens with it', async () => {
    const first = await gw.teamToken('retired');
    const second = await gw.admin('POST', '/admin/v1/teams/retired/tokens', { name: 'second' });
    const stillActive = await gw.admin('DELETE', '/admin/v1/teams/retired');
    expect(stillActive.status).toBe(409);
    expect(stillActive.body.error.message).toMatch(/2 active token/);
    await gw.admin('DELETE', `/admin/v1/tokens/${first.id}`);
    const oneLeft = await gw.admin('DELETE', '/admin/v1/teams/retired');
    expect(oneLeft.body.error.message).toMatch(/1 active token/);
    await gw.admin('DELETE', `/admin/v1/tokens/${second.body.id}`);
    const deleted = await gw.admin('DELETE', '/admin/v1/teams/retired');
    expect(deleted.status).toBe(200);
    expect(deleted.body).toEqual({ id: 'retired', object: 'team', deleted: true, tokensDeleted: 2 });
    expect((await gw.admin('GET', `/admin/v1/tokens/${first.id}`)).status).toBe(404);
  });

  it('lists tokens without secrets: id, name, prefix, created, last used, expiry, status', async () => {
    await gw.admin('POST', '/admin/v1/teams', { id: 'listing' });
    const created = await gw.admin('POST', '/admin/v1/teams/listing/tokens', {
      name: 'ci',
      expiresInSeconds: 3600,
    });
    expect(created.status).toBe(201);
    expect((await chat(created.body.token)).status).toBe(200);
    // lastUsedAt is written off the request's path.
    const listed = await eventually(async () => {
      const answer = await gw.admin('GET', '/admin/v1/teams/listing/tokens');
      expect(answer.body.data[0]?.lastUsedAt).toEqual(expect.any(String));
      return answer;
    });
    expect(listed.body.data).toEqual([
      {
        id: created.body.id,
        object: 'token',
        team: 'listing',
        name: 'ci',
        prefix: `sy-${created.body.id}`,
        status: 'active',
        createdAt: expect.any(String),
        lastUsedAt: expect.any(String),
        expiresAt: created.body.expiresAt,
        revokedAt: null,
        rotatedAt: null,
        models: null,
        mcpTools: null,
        limits: {},
        owner: null, // issued for the team, not by a member for themself
      },
    ]);
    expect(Date.parse(created.body.expiresAt) - Date.now()).toBeGreaterThan(3590_000);
    expect(JSON.stringify(listed.body)).not.toContain(created.body.token.slice(20));
    expect(JSON.stringify(listed.body)).not.toMatch(/hash/i);
  });

  it('an expired token gets 401 with code token_expired', async () => {
    await gw.admin('POST', '/admin/v1/teams', { id: 'expiring' });
    const { body } = await gw.admin('POST', '/admin/v1/teams/expiring/tokens', { expiresInSeconds: 1 });
    expect((await chat(body.token)).status).toBe(200); // cached now: expiry must still apply
    await untilPast(Date.parse(body.expiresAt));
    const expired = await chat(body.token);
    expect(expired.status).toBe(401);
    expect(expired.body.error).toMatchObject({ code: 'token_expired', type: 'invalid_request_error' });
    expect((await gw.admin('GET', `/admin/v1/tokens/${body.id}`)).body.status).toBe('expired');
    const past = await gw.admin('POST', '/admin/v1/teams/expiring/tokens', {
      expiresAt: '2020-01-01T00:00:00Z',
    });
    expect(past.status).toBe(400);
    expect(past.body.error.param).toBe('expiresAt');
  });

  it("a token can narrow its team's models, never widen them", async () => {
    await gw.admin('POST', '/admin/v1/teams', { id: 'narrow', models: ['echo', 'status-*'] });
    const wider = await gw.admin('POST', '/admin/v1/teams/narrow/tokens', { models: ['echo', 'slow'] });
    expect(wider.status).toBe(400);
    expect(wider.body.error).toMatchObject({ param: 'models' });
    expect(wider.body.error.message).toContain('`slow`');
    const { body } = await gw.admin('POST', '/admin/v1/teams/narrow/tokens', { models: ['status-4*'] });
    expect(body.models).toEqual(['status-4*']);
    expect((await chat(body.token, { ...hello, model: 'echo' })).status).toBe(403);
    expect((await chat(body.token, { ...hello, model: 'status-400' })).status).toBe(400); // reached the upstream
    const models = await gw.asTeam(body.token, 'GET', '/v1/models');
    expect(models.body.data.map((m: any) => m.id).sort()).toEqual([
      'status-400',
      'status-401',
      'status-404',
      'status-429',
    ]);
  });

  it('rotation: a new secret under the same id; grace 0 stops the old one at once, a grace period keeps it working until then', async () => {
    await gw.admin('POST', '/admin/v1/teams', { id: 'rotating' });
    const original = (await gw.admin('POST', '/admin/v1/teams/rotating/tokens', {})).body;
    expect((await chat(original.token)).status).toBe(200);

    const now = (await gw.admin('POST', `/admin/v1/tokens/${original.id}/rotate`, {})).body;
    expect(now.id).toBe(original.id);
    expect(now.token).toMatch(new RegExp(`^sy-${original.id}-[A-Za-z0-9_-]{43}$`));
    expect(new Set([original.token, now.token]).size).toBe(2);
    expect((await chat(original.token)).status).toBe(401);
    expect((await chat(now.token)).status).toBe(200);

    const graceful = (
      await gw.admin('POST', `/admin/v1/tokens/${original.id}/rotate`, { gracePeriodSeconds: 1 })
    ).body;
    expect((await chat(now.token)).status).toBe(200); // old secret, inside the grace period
    expect((await chat(graceful.token)).status).toBe(200);
    await untilPast(Date.parse(graceful.rotatedAt) + 1000); // the grace period's end
    expect((await chat(now.token)).status).toBe(401);
    expect((await chat(graceful.token)).status).toBe(200);
    expect(
      (await gw.admin('POST', `/admin/v1/tokens/${original.id}/rotate`, { gracePeriodSeconds: -1 })).status,
    ).toBe(400);
  });

  it('writes every admin change to the audit trail: who, what, when', async () => {
    const by = { 'x-switchyard-actor': 'ana@example.com' };
    await gw.admin('POST', '/admin/v1/teams', { id: 'audited', limits: { requestsPerMinute: 5 } }, by);
    const token = (await gw.admin('POST', '/admin/v1/teams/audited/tokens', { name: 'a' }, by)).body;
    await gw.admin('PATCH', '/admin/v1/teams/audited', { disabled: true }, by);
    await gw.admin('POST', `/admin/v1/tokens/${token.id}/rotate`, { gracePeriodSeconds: 5 }, by);
    await gw.admin('DELETE', `/admin/v1/tokens/${token.id}`);
    await gw.admin('DELETE', '/admin/v1/teams/audited?force=true');

    const audit = await gw.admin('GET', '/admin/v1/audit?target=team/audited&limit=10');
    expect(audit.status).toBe(200);
    expect(audit.body.data.map((e: any) => e.action)).toEqual([
      'team.delete',
      'token.revoke',
      'token.rotate',
      'team.disable',
      'token.create',
      'team.create',
    ]);
    const [deleted, revoked, rotated, , , created] = audit.body.data;
    expect(created).toMatchObject({
      actor: 'admin-api:ana@example.com',
      target: 'team/audited',
      details: { limits: { requestsPerMinute: 5 } },
      ip: expect.any(String),
      requestId: expect.any(String),
    });
    expect(Math.abs(Date.parse(created.at) - Date.now())).toBeLessThan(10_000);
    expect(rotated).toMatchObject({ target: `team/audited/token/${token.id}`, details: { graceSeconds: 5 } });
    expect(revoked.actor).toBe('admin-api');
    expect(deleted.details).toEqual({ force: true, tokensDeleted: 1 });
    expect(JSON.stringify(audit.body)).not.toContain(token.token.slice(20));
    const page = await gw.admin(
      'GET',
      `/admin/v1/audit?target=team/audited&limit=2&before=${audit.body.data[1].id}`,
    );
    expect(page.body.data.map((e: any) => e.action)).toEqual(['token.rotate', 'team.disable']);
    expect((await gw.admin('GET', '/admin/v1/audit?limit=0')).status).toBe(400);
  });
});
