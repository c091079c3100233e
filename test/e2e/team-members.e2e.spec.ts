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

  it("with no ceiling, lets a team-admin only narrow their team; widening, labels and disabling are an org-admin's", async () => {
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

  it('under a ceiling, lets a team-admin widen up to it and no further; an org-viewer sees it, only an org-admin sets it', async () => {
    await gw.admin('POST', '/admin/v1/teams', {
      id: 'capped',
      models: ['echo'],
      limits: { requestsPerMinute: 50, tokensPerDay: 1000 },
    });
    const asCarol = await signedIn(gw, { subject: 'idp|carol' }, [{ kind: 'team-admin', team: 'capped' }]);
    const asViewer = await signedIn(gw, { subject: 'idp|vic' }, [{ kind: 'org-viewer' }]);
    const ceiling = { models: ['echo', 'gpt-*'], limits: { requestsPerMinute: 200, tokensPerDay: 5000 } };
    // Only an org-admin sets the ceiling.
    for (const who of [asCarol, asViewer]) {
      const refused = await who.call('PATCH', '/admin/v1/teams/capped', { ceiling });
      expect([refused.status, refused.body.error.code]).toEqual([403, 'permission_denied']);
    }
    expect((await asCarol.call('PATCH', '/admin/v1/teams/capped', { ceiling })).body.error.param).toBe(
      'ceiling',
    );
    const set = await gw.admin('PATCH', '/admin/v1/teams/capped', { ceiling });
    expect(set.status).toBe(200);
    expect(set.body).toMatchObject({ ceiling, models: ['echo'], limits: { requestsPerMinute: 50 } });
    // Whoever may read the team sees it.
    expect((await asViewer.call('GET', '/admin/v1/teams/capped')).body.ceiling).toEqual(ceiling);
    expect((await asCarol.call('GET', '/admin/v1/teams/capped')).body.ceiling).toEqual(ceiling);

    // Widened to the ceiling, past what the team had: allowed.
    const widened = await asCarol.call('PATCH', '/admin/v1/teams/capped', {
      models: ['echo', 'gpt-*'],
      limits: { requestsPerMinute: 200, tokensPerDay: 5000 },
    });
    expect(widened.status).toBe(200);
    expect(widened.body).toMatchObject({
      models: ['echo', 'gpt-*'],
      limits: { requestsPerMinute: 200, tokensPerDay: 5000 },
    });
    const refusals: Array<[object, string]> = [
      [{ limits: { requestsPerMinute: 201 } }, 'limits.requestsPerMinute'],
      [{ limits: { tokensPerDay: 5001 } }, 'limits.tokensPerDay'],
      [{ limits: { tokensPerDay: null } }, 'limits.tokensPerDay'],
      [{ limits: null }, 'limits'],
      [{ models: ['*'] }, 'models'],
      [{ models: ['gpt*'] }, 'models'],
      [{ ceiling: null }, 'ceiling'],
    ];
    for (const [body, param] of refusals) {
      const refused = await asCarol.call('PATCH', '/admin/v1/teams/capped', body);
      expect([refused.status, refused.body.error]).toEqual([
        403,
        expect.objectContaining({ code: 'permission_denied', type: 'invalid_request_error', param }),
      ]);
    }
    expect(
      (await asCarol.call('PATCH', '/admin/v1/teams/capped', { limits: { requestsPerMinute: 201 } })).body
        .error.message,
    ).toContain("201 is above the team's ceiling (200)");
    // A limit the ceiling does not have is the team-admin's.
    expect(
      (await asCarol.call('PATCH', '/admin/v1/teams/capped', { limits: { tokensPerMinute: 10 ** 9 } }))
        .status,
    ).toBe(200);

    // An org-admin naming a value beyond the ceiling: 400, the field named.
    const beyond = await gw.admin('PATCH', '/admin/v1/teams/capped', { limits: { requestsPerMinute: 300 } });
    expect([beyond.status, beyond.body.error.param]).toEqual([400, 'limits.requestsPerMinute']);

    // Lowering the ceiling lowers the team in the same write, and the audit entry says what was clamped.
    const lowered = await gw.admin('PATCH', '/admin/v1/teams/capped', {
      ceiling: { models: ['gpt-6-*', 'echo'], limits: { requestsPerMinute: 100 } },
    });
    expect(lowered.status).toBe(200);
    expect(lowered.body).toMatchObject({
      models: ['echo', 'gpt-6-*'],
      limits: { requestsPerMinute: 100, tokensPerMinute: 10 ** 9, tokensPerDay: 5000 },
    });
    const [entry] = (await gw.admin('GET', '/admin/v1/audit?action=team.update&target=team/capped&limit=1'))
      .body.data;
    expect(entry.details.clamped).toEqual({
      models: { from: ['echo', 'gpt-*'], to: ['echo', 'gpt-6-*'] },
      limits: {
        from: { requestsPerMinute: 200, tokensPerMinute: 10 ** 9, tokensPerDay: 5000 },
        to: { requestsPerMinute: 100, tokensPerMinute: 10 ** 9, tokensPerDay: 5000 },
      },
    });
  });

  it('refuses a malformed ceiling with 400 naming the field', async () => {
    await gw.admin('POST', '/admin/v1/teams', { id: 'malformed' });
    const bodies: Array<[object, string]> = [
      [{ ceiling: 'all' }, 'ceiling'],
      [{ ceiling: { models: 'gpt-*' } }, 'ceiling.models'],
      [{ ceiling: { models: [1] } }, 'ceiling.models'],
      [{ ceiling: { limits: { requestsPerMinute: 0 } } }, 'ceiling.limits.requestsPerMinute'],
      [{ ceiling: { limits: { speed: 5 } } }, 'ceiling.limits.speed'],
      [{ ceiling: { owner: 'x' } }, 'ceiling.owner'],
    ];
    for (const [body, param] of bodies) {
      for (const [method, path] of [
        ['PATCH', '/admin/v1/teams/malformed'],
        ['POST', '/admin/v1/teams'],
      ]) {
        const refused = await gw.admin(
          method,
          path,
          method === 'POST' ? { id: 'malformed-2', ...body } : body,
        );
        expect([method, refused.status, refused.body.error.param]).toEqual([method, 400, param]);
      }
    }
    expect((await gw.admin('GET', '/admin/v1/teams/malformed')).body.ceiling).toBeNull();
  });

  it("never lets a team-admin's change land above a ceiling lowered at the same time (concurrent requests)", async () => {
    await gw.admin('POST', '/admin/v1/teams', { id: 'raced' });
    const asDan = await signedIn(gw, { subject: 'idp|dan' }, [{ kind: 'team-admin', team: 'raced' }]);
    for (let round = 0; round < 15; round++) {
      await gw.admin('PATCH', '/admin/v1/teams/raced', {
        ceiling: { limits: { requestsPerMinute: 1000 } },
        limits: { requestsPerMinute: 10 },
      });
      // The team-admin raises to 900 (within the ceiling as it is) while the org-admin lowers the ceiling to 100.
      const [raised, lowered] = await Promise.all([
        asDan.call('PATCH', '/admin/v1/teams/raced', { limits: { requestsPerMinute: 900 } }),
        gw.admin('PATCH', '/admin/v1/teams/raced', { ceiling: { limits: { requestsPerMinute: 100 } } }),
      ]);
      expect(lowered.status).toBe(200);
      expect([200, 403]).toContain(raised.status);
      const team = (await gw.admin('GET', '/admin/v1/teams/raced')).body;
      expect(team.ceiling.limits.requestsPerMinute).toBe(100);
      expect(team.limits.requestsPerMinute).toBeLessThanOrEqual(100);
    }
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
