import OpenAI from 'openai';
import { signedIn, type SignedIn } from '../support/admin-actors';
import { OpenAIUpstream } from '../support/openai-upstream';
import { startTestGateway, type TestGateway } from '../support/test-gateway';

const mia = { subject: 'idp|mia', email: 'mia@example.com', name: 'Mia' };
const noah = { subject: 'idp|noah', email: 'noah@example.com' };
const lead = { subject: 'idp|lead', email: 'lead@example.com' };

/** The four routes of a person's own tokens of `team`, as [method, path] (`{id}` a token's id). */
const ownRoutes = (team: string, id: string): Array<[string, string, unknown?]> => [
  ['GET', `/admin/v1/me/teams/${team}/tokens`],
  ['POST', `/admin/v1/me/teams/${team}/tokens`, { name: 'laptop' }],
  ['POST', `/admin/v1/me/teams/${team}/tokens/${id}/rotate`, {}],
  ['DELETE', `/admin/v1/me/teams/${team}/tokens/${id}`],
];

/** One chat call with `token`: its HTTP status (200, or the SDK error's). */
async function chatStatus(gw: TestGateway, token: string): Promise<number> {
  try {
    await gw.openai(token).chat.completions.create({
      model: 'echo',
      messages: [{ role: 'user', content: 'hi' }],
    });
    return 200;
  } catch (error) {
    if (error instanceof OpenAI.APIError) return error.status ?? 0;
    throw error;
  }
}

/**
 * Team tokens of a member's own (docs/api.md, Team tokens of your own): a team-member keeps their own tokens only
 * where the team allows it (selfServiceTokens, set by an org-admin, the team's team-admin or the config seed),
 * sees and manages only theirs, and a team-admin sees every token's owner. A member's token is the team's
 * credential: it keeps working when its owner loses the right to manage it.
 */
describe('admin API: team tokens of your own', () => {
  let upstream: OpenAIUpstream;
  let gw: TestGateway;
  let asMia: SignedIn;
  let asNoah: SignedIn;
  let asLead: SignedIn;

  beforeAll(async () => {
    upstream = await new OpenAIUpstream().start();
    gw = await startTestGateway({
      upstreamUrl: upstream.url,
      config: {
        teams: {
          open: { models: ['echo', 'slow'], selfServiceTokens: true },
          closed: { models: ['*'] },
        },
      },
    });
    asMia = await signedIn(gw, mia, [
      { kind: 'team-member', team: 'open' },
      { kind: 'team-member', team: 'closed' },
    ]);
    asNoah = await signedIn(gw, noah, [{ kind: 'team-member', team: 'open' }]);
    asLead = await signedIn(gw, lead, [
      { kind: 'team-admin', team: 'open' },
      { kind: 'team-admin', team: 'closed' },
    ]);
  });
  afterAll(async () => {
    await gw.close();
    await upstream.stop();
  });

  it('takes the setting from the config seed (default off), and says where a person may keep their own', async () => {
    expect((await gw.admin('GET', '/admin/v1/teams/open')).body.selfServiceTokens).toBe(true);
    expect((await gw.admin('GET', '/admin/v1/teams/closed')).body.selfServiceTokens).toBe(false);
    const me = await asMia.call('GET', '/admin/v1/me');
    expect(me.body.own_token_teams).toEqual(['open']);
    expect((await asLead.call('GET', '/admin/v1/me')).body.own_token_teams).toEqual(['closed', 'open']);
  });

  it('lets a member issue a token of their own, shown once, that calls models; list, rotate and revoke it', async () => {
    const issued = await asMia.call('POST', '/admin/v1/me/teams/open/tokens', { name: 'mia-laptop' });
    expect(issued.status).toBe(201);
    expect(issued.body).toMatchObject({
      object: 'token',
      team: 'open',
      name: 'mia-laptop',
      status: 'active',
      owner: { subject: mia.subject, email: mia.email },
    });
    expect(issued.body.token).toMatch(/^sy-/);
    expect(await chatStatus(gw, issued.body.token)).toBe(200);

    const listed = await asMia.call('GET', '/admin/v1/me/teams/open/tokens');
    expect(listed.status).toBe(200);
    expect(listed.body.data.map((t: { id: string }) => t.id)).toEqual([issued.body.id]);
    expect(JSON.stringify(listed.body)).not.toContain(issued.body.token);

    const rotated = await asMia.call('POST', `/admin/v1/me/teams/open/tokens/${issued.body.id}/rotate`, {
      gracePeriodSeconds: 0,
    });
    expect(rotated.status).toBe(200);
    expect(rotated.body.token).not.toBe(issued.body.token);
    expect(await chatStatus(gw, issued.body.token)).toBe(401);
    expect(await chatStatus(gw, rotated.body.token)).toBe(200);

    const revoked = await asMia.call('DELETE', `/admin/v1/me/teams/open/tokens/${issued.body.id}`);
    expect(revoked.status).toBe(200);
    expect(revoked.body.status).toBe('revoked');
    expect(await chatStatus(gw, rotated.body.token)).toBe(401);

    // The audit trail names her on each change, and the token's owner.
    const audit = await gw.admin('GET', `/admin/v1/audit?target=team/open/token/${issued.body.id}`);
    expect(audit.body.data.map((e: { action: string }) => e.action).sort()).toEqual([
      'token.create',
      'token.revoke',
      'token.rotate',
    ]);
    for (const entry of audit.body.data)
      expect(entry.person).toEqual({ subject: mia.subject, email: mia.email });
    const created = audit.body.data.find((e: { action: string }) => e.action === 'token.create');
    expect(created.details.owner).toEqual({ subject: mia.subject, email: mia.email });
  });

  it("shows a member their own tokens only, and no one else's is theirs to rotate or revoke", async () => {
    const miaToken = await asMia.call('POST', '/admin/v1/me/teams/open/tokens', { name: 'mia-ci' });
    const noahToken = await asNoah.call('POST', '/admin/v1/me/teams/open/tokens', { name: 'noah-ci' });
    const teamToken = await gw.admin('POST', '/admin/v1/teams/open/tokens', { name: 'the-teams' });
    const mine = (await asNoah.call('GET', '/admin/v1/me/teams/open/tokens')).body.data;
    expect(mine.map((t: { name: string }) => t.name)).toEqual(['noah-ci']);
    for (const id of [miaToken.body.id, teamToken.body.id]) {
      for (const [method, path] of [
        ['POST', `/admin/v1/me/teams/open/tokens/${id}/rotate`],
        ['DELETE', `/admin/v1/me/teams/open/tokens/${id}`],
      ]) {
        const refused = await asNoah.call(method, path, method === 'POST' ? {} : undefined);
        expect([path, refused.status, refused.body.error.code]).toEqual([path, 404, 'token_not_found']);
      }
      expect((await gw.admin('GET', `/admin/v1/tokens/${id}`)).body.status).toBe('active');
    }
    // The team's own routes stay a team-admin's: a member reads no team token there.
    for (const [method, path] of [
      ['GET', '/admin/v1/teams/open/tokens'],
      ['GET', `/admin/v1/tokens/${noahToken.body.id}`],
      ['DELETE', `/admin/v1/tokens/${noahToken.body.id}`],
    ])
      expect([path, (await asNoah.call(method, path)).status]).toEqual([path, 403]);
  });

  it("holds a member's token to the team's models, as every token", async () => {
    const wider = await asMia.call('POST', '/admin/v1/me/teams/open/tokens', { models: ['gpt-*'] });
    expect(wider.status).toBe(400);
    expect(wider.body.error.param).toBe('models');
    const narrower = await asMia.call('POST', '/admin/v1/me/teams/open/tokens', { models: ['slow'] });
    expect(narrower.status).toBe(201);
    expect(narrower.body.models).toEqual(['slow']);
    expect(await chatStatus(gw, narrower.body.token)).toBe(403); // echo: not among the token's models
  });

  it('refuses a member of a team that does not allow it, on every route (403 permission_denied)', async () => {
    const teamToken = await gw.admin('POST', '/admin/v1/teams/closed/tokens', { name: 'x' });
    for (const [method, path, body] of ownRoutes('closed', teamToken.body.id)) {
      const refused = await asMia.call(method, path, body);
      expect([method, path, refused.status, refused.body.error.code]).toEqual([
        method,
        path,
        403,
        'permission_denied',
      ]);
      expect(refused.body.error.message).toContain('tokens:own on team "closed"');
    }
    // The admin key is nobody: no tokens of its own.
    const byKey = await gw.admin('POST', '/admin/v1/me/teams/open/tokens', { name: 'x' });
    expect(byKey.status).toBe(403);
    expect(byKey.body.error.message).toMatch(/belong to a person/);
  });

  it("shows a team-admin every token's owner, and lets them turn the setting on and off; a member may not", async () => {
    const issued = await asNoah.call('POST', '/admin/v1/me/teams/open/tokens', { name: 'noah-owned' });
    const listed = (await asLead.call('GET', '/admin/v1/teams/open/tokens')).body.data;
    expect(listed.find((t: { id: string }) => t.id === issued.body.id).owner).toEqual({
      subject: noah.subject,
      email: noah.email,
    });
    expect(listed.filter((t: { owner: unknown }) => t.owner === null).length).toBeGreaterThan(0);
    expect((await asLead.call('GET', `/admin/v1/tokens/${issued.body.id}`)).body.owner.subject).toBe(
      noah.subject,
    );

    expect((await asMia.call('PATCH', '/admin/v1/teams/closed', { selfServiceTokens: true })).status).toBe(
      403,
    );
    const on = await asLead.call('PATCH', '/admin/v1/teams/closed', { selfServiceTokens: true });
    expect([on.status, on.body.selfServiceTokens]).toEqual([200, true]);
    expect((await asMia.call('GET', '/admin/v1/me/teams/closed/tokens')).status).toBe(200);
    const off = await asLead.call('PATCH', '/admin/v1/teams/closed', { selfServiceTokens: false });
    expect([off.status, off.body.selfServiceTokens]).toEqual([200, false]);
    expect((await asMia.call('GET', '/admin/v1/me/teams/closed/tokens')).status).toBe(403);
    // A team made with it on (by an org-admin).
    const made = await gw.admin('POST', '/admin/v1/teams', { id: 'made-open', selfServiceTokens: true });
    expect([made.status, made.body.selfServiceTokens]).toEqual([201, true]);
  });

  it("keeps a member's token working when they lose the right to manage it; the team-admin still sees whose it was", async () => {
    // Granted membership (not a sign-in role), so it can be taken away.
    const ola = { subject: 'idp|ola', email: 'ola@example.com' };
    const asOla = await signedIn(gw, ola, []);
    await gw.admin('PUT', `/admin/v1/teams/open/members/${ola.subject}`, { role: 'team-member' });
    const issued = await asOla.call('POST', '/admin/v1/me/teams/open/tokens', { name: 'ola-box' });
    expect(issued.status).toBe(201);

    expect((await gw.admin('DELETE', `/admin/v1/teams/open/members/${ola.subject}`)).status).toBe(200);
    for (const [method, path, body] of ownRoutes('open', issued.body.id))
      expect([method, path, (await asOla.call(method, path, body)).status]).toEqual([method, path, 403]);
    expect(await chatStatus(gw, issued.body.token)).toBe(200);
    const seen = (await asLead.call('GET', '/admin/v1/teams/open/tokens')).body.data.find(
      (t: { id: string }) => t.id === issued.body.id,
    );
    expect(seen).toMatchObject({ status: 'active', owner: { subject: ola.subject } });

    // The team turns the setting off: its members' tokens work on, their owners manage them no more.
    const kept = await asMia.call('POST', '/admin/v1/me/teams/open/tokens', { name: 'mia-kept' });
    await gw.admin('PATCH', '/admin/v1/teams/open', { selfServiceTokens: false });
    try {
      expect((await asMia.call('GET', '/admin/v1/me/teams/open/tokens')).status).toBe(403);
      expect((await asMia.call('GET', '/admin/v1/me')).body.own_token_teams).toEqual([]);
      expect(await chatStatus(gw, kept.body.token)).toBe(200);
    } finally {
      await gw.admin('PATCH', '/admin/v1/teams/open', { selfServiceTokens: true });
    }
    // The team-admin revokes it on the team's own route.
    expect((await asLead.call('DELETE', `/admin/v1/tokens/${issued.body.id}`)).status).toBe(200);
    expect(await chatStatus(gw, issued.body.token)).toBe(401);
  });
});
