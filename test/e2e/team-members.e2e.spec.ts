import { signedIn } from '../support/admin-actors';
import { eventually } from '../support/eventually';
import { OpenAIUpstream } from '../support/openai-upstream';
import { startTestGateway, type TestGateway } from '../support/test-gateway';

const alice = { subject: 'idp|alice', email: 'alice@example.com', name: 'Alice' };
const bob = { subject: 'idp|bob', email: 'bob@example.com' };

/**
 * Memberships granted in the admin API: they add to a person's roles from their next request, a team-admin runs
 * their own team (and no other), and the audit trail names the person behind each change.
 */
describe('admin API: team members and what they may do', () => {
  let upstream: OpenAIUpstream;
  let gw: TestGateway;

  beforeAll(async () => {
    upstream = await new OpenAIUpstream().start();
    gw = await startTestGateway({ upstreamUrl: upstream.url });
    for (const id of ['alpha', 'beta'])
      await gw.admin('POST', '/admin/v1/teams', { id, limits: { requestsPerMinute: 100 } });
  });
  afterAll(async () => {
    await gw.close();
    await upstream.stop();
  });

  it('grants a role that takes effect at the next request, and takes it away again', async () => {
    const asAlice = await signedIn(gw, alice, []); // signed in with no role of her own
    expect((await asAlice.call('POST', '/admin/v1/teams/alpha/tokens', { name: 'ci' })).status).toBe(403);

    const granted = await gw.admin('PUT', `/admin/v1/teams/alpha/members/${alice.subject}`, {
      role: 'team-admin',
    });
    expect(granted.status).toBe(200);
    expect(granted.body).toMatchObject({
      object: 'team.member',
      team: 'alpha',
      subject: alice.subject,
      role: 'team-admin',
      grantedBy: 'admin-api',
    });
    expect((await gw.admin('GET', '/admin/v1/teams/alpha/members')).body.data).toEqual([granted.body]);

    const issued = await asAlice.call('POST', '/admin/v1/teams/alpha/tokens', { name: 'ci' });
    expect(issued.status).toBe(201);
    expect(issued.body.token).toMatch(/^sy-/);
    const elsewhere = await asAlice.call('POST', '/admin/v1/teams/beta/tokens', { name: 'ci' });
    expect(elsewhere.status).toBe(403);
    expect(elsewhere.body.error).toMatchObject({ code: 'permission_denied', type: 'invalid_request_error' });
    expect(elsewhere.body.error.message).toContain('team-admin:alpha');
    // Lists show her team only.
    expect((await asAlice.call('GET', '/admin/v1/teams')).body.data.map((t: any) => t.id)).toEqual(['alpha']);

    expect((await gw.admin('DELETE', `/admin/v1/teams/alpha/members/${alice.subject}`)).status).toBe(200);
    expect((await asAlice.call('POST', '/admin/v1/teams/alpha/tokens', { name: 'ci' })).status).toBe(403);
    expect((await asAlice.call('GET', '/admin/v1/teams')).status).toBe(403);
    const gone = await gw.admin('GET', `/admin/v1/teams/alpha/members/${alice.subject}`);
    expect(gone.status).toBe(404);
    expect(gone.body.error.code).toBe('member_not_found');
  });

  it("lets a team-admin run their team's members, not another's; a team-member reads usage and spend only", async () => {
    const asAlice = await signedIn(gw, alice, [{ kind: 'team-admin', team: 'alpha' }]);
    const asBob = await signedIn(gw, bob, []);
    expect(
      (await asAlice.call('PUT', `/admin/v1/teams/alpha/members/${bob.subject}`, { role: 'team-member' }))
        .status,
    ).toBe(200);
    expect(
      (await asAlice.call('PUT', `/admin/v1/teams/beta/members/${bob.subject}`, { role: 'team-admin' }))
        .status,
    ).toBe(403);
    const badRole = await asAlice.call('PUT', `/admin/v1/teams/alpha/members/${bob.subject}`, {
      role: 'org-admin',
    });
    expect(badRole.status).toBe(400);
    expect(badRole.body.error.param).toBe('role');

    expect((await asBob.call('GET', '/admin/v1/usage?team=alpha')).status).toBe(200);
    expect((await asBob.call('GET', '/admin/v1/teams/alpha/budget')).status).toBe(200);
    expect((await asBob.call('GET', '/admin/v1/usage?team=beta')).status).toBe(403);
    expect((await asBob.call('GET', '/admin/v1/teams/alpha')).status).toBe(403);
    expect((await asBob.call('GET', '/admin/v1/teams/alpha/tokens')).status).toBe(403);
    expect((await asBob.call('GET', '/admin/v1/audit')).status).toBe(403);
    // Without team=, the usage of the teams he may read, not everyone's.
    await gw.asTeam((await gw.teamToken('beta')).token, 'POST', '/v1/chat/completions', {
      model: 'echo',
      messages: [{ role: 'user', content: 'hi' }],
    });
    await eventually(async () =>
      expect((await gw.admin('GET', '/admin/v1/usage?team=beta')).body.total.requests).toBe(1),
    );
    const usage = await asBob.call('GET', '/admin/v1/usage?groupBy=model');
    expect(usage.status).toBe(200);
    expect(usage.body.data.every((row: any) => row.team === 'alpha')).toBe(true);
  });

  it("lets a team-admin only narrow their team; widening, labels and disabling are an org-admin's", async () => {
    const asAlice = await signedIn(gw, alice, [{ kind: 'team-admin', team: 'alpha' }]);
    const narrower = await asAlice.call('PATCH', '/admin/v1/teams/alpha', {
      models: ['echo', 'slow*'],
      limits: { requestsPerMinute: 50, tokensPerDay: 1000 },
    });
    expect(narrower.status).toBe(200);
    expect(narrower.body).toMatchObject({
      models: ['echo', 'slow*'],
      limits: { requestsPerMinute: 50, tokensPerDay: 1000 },
    });
    const refusals: Array<[object, string]> = [
      [{ limits: { requestsPerMinute: 51 } }, 'limits.requestsPerMinute'],
      [{ limits: { tokensPerDay: null } }, 'limits.tokensPerDay'],
      [{ limits: null }, 'limits'],
      [{ models: ['*'] }, 'models'],
      [{ models: ['s*'] }, 'models'],
      [{ metadata: { owner: 'alice' } }, 'metadata'],
      [{ disabled: true }, 'disabled'],
    ];
    for (const [body, param] of refusals) {
      const refused = await asAlice.call('PATCH', '/admin/v1/teams/alpha', body);
      expect([refused.status, refused.body.error]).toEqual([
        403,
        expect.objectContaining({ code: 'permission_denied', param }),
      ]);
    }
    expect((await asAlice.call('POST', '/admin/v1/teams/alpha/disable')).status).toBe(403);
    expect(
      (
        await gw.admin('PATCH', '/admin/v1/teams/alpha', {
          models: ['*'],
          limits: { requestsPerMinute: 100 },
        })
      ).status,
    ).toBe(200);
  });

  it("names the person in the audit trail, and shows a team-admin their team's entries only", async () => {
    await gw.admin('PUT', `/admin/v1/teams/alpha/members/${alice.subject}`, { role: 'team-admin' });
    const asAlice = await signedIn(gw, alice, []);
    const issued = await asAlice.call('POST', '/admin/v1/teams/alpha/tokens', { name: 'audited' });
    const entries = (
      await gw.admin('GET', `/admin/v1/audit?action=token.create&target=team/alpha/token/${issued.body.id}`)
    ).body.data;
    expect(entries).toEqual([
      expect.objectContaining({
        actor: 'console:alice@example.com',
        person: { subject: alice.subject, email: alice.email },
      }),
    ]);
    // The admin key names no person.
    expect((await gw.admin('GET', '/admin/v1/audit?action=team.create')).body.data[0].person).toBeNull();

    await gw.admin('POST', '/admin/v1/teams/beta/disable');
    const seen = (await asAlice.call('GET', '/admin/v1/audit?limit=1000')).body.data as Array<{
      target: string;
    }>;
    expect(seen.length).toBeGreaterThan(0);
    expect(
      seen.every((entry) => entry.target === 'team/alpha' || entry.target.startsWith('team/alpha/')),
    ).toBe(true);
  });

  it("forgets a team's memberships with the team", async () => {
    await gw.admin('POST', '/admin/v1/teams', { id: 'short-lived' });
    await gw.admin('PUT', `/admin/v1/teams/short-lived/members/${bob.subject}`, { role: 'team-admin' });
    expect((await gw.admin('DELETE', '/admin/v1/teams/short-lived')).status).toBe(200);
    await gw.admin('POST', '/admin/v1/teams', { id: 'short-lived' });
    expect((await gw.admin('GET', '/admin/v1/teams/short-lived/members')).body.data).toEqual([]);
    const asBob = await signedIn(gw, bob, []);
    expect((await asBob.call('GET', '/admin/v1/teams/short-lived/tokens')).status).toBe(403);
  });
});
