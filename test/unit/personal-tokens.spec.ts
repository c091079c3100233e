import { Writable } from 'node:stream';
import { AdminActors } from '../../src/auth/admin-actors';
import { ADMIN_KEY_FAILURE_WINDOW_SECONDS, AdminKeyThrottle } from '../../src/auth/admin-key-throttle';
import { MemoryFailureCounts } from '../../src/auth/failure-counts';
import { personalTokenIdOf } from '../../src/auth/personal-token-format';
import { PersonalTokens } from '../../src/auth/personal-tokens';
import { AppLogger } from '../../src/common/logging/logger';
import { GatewayException } from '../../src/core/errors/gateway.exception';
import { InFlightTracker } from '../../src/lifecycle/in-flight.tracker';
import { MetricsService } from '../../src/metrics/metrics.service';
import { buildConfig } from '../support/config';
import { InMemoryPersonalTokenRecords } from '../support/in-memory-personal-token-records';
import { InMemoryTeamMemberRecords } from '../support/in-memory-team-member-records';

const ana = { subject: 'ana', email: 'ana@example.com' };

const outcome = (promise: Promise<unknown>) =>
  promise.then(
    (value) => value,
    (error: GatewayException) => ({ status: error.status, code: error.code, message: error.message }),
  );

describe('personal admin tokens: the check of a presented token', () => {
  const setUp = () => {
    const records = new InMemoryPersonalTokenRecords();
    return { records, tokens: new PersonalTokens(records) };
  };

  it('issues sy_admin_<id>_<secret>, keeps only its hash, and knows it again with the roles of the last sign-in', async () => {
    const { records, tokens } = setUp();
    await tokens.rememberSignIn(ana, [{ kind: 'team-admin', team: 'a' }]);
    const issued = await tokens.issue(ana, 'laptop', 30);
    expect(issued.token).toMatch(/^sy_admin_[0-9a-f]{16}_[\w-]{43}$/);
    expect(personalTokenIdOf(issued.token)).toBe(issued.id);
    expect(JSON.stringify([...records.tokens.values()])).not.toContain(issued.token);
    expect(Date.parse(issued.expiresAt) - Date.parse(issued.createdAt)).toBe(30 * 86_400_000);
    expect(await tokens.authenticate(issued.token)).toEqual({
      tokenId: issued.id,
      person: ana,
      signInRoles: [{ kind: 'team-admin', team: 'a' }],
    });
    // A later sign-in with fewer roles is what the token acts with from then on.
    await tokens.rememberSignIn(ana, []);
    expect((await tokens.authenticate(issued.token))?.signInRoles).toEqual([]);
    const [listed] = await tokens.list('ana');
    expect(listed).toMatchObject({
      id: issued.id,
      name: 'laptop',
      status: 'active',
      lastUsedAt: expect.any(String),
    });
    expect(JSON.stringify(listed)).not.toMatch(/hash|sy_admin_[0-9a-f]{16}_/);
  });

  it('answers null (a guess, to count) for a wrong secret, an unknown id, or anything not shaped like one', async () => {
    const { tokens } = setUp();
    const issued = await tokens.issue(ana, 'laptop', 1);
    const wrongSecret = issued.token.slice(0, -1) + (issued.token.endsWith('A') ? 'B' : 'A');
    expect(await tokens.authenticate(wrongSecret)).toBeNull();
    expect(await tokens.authenticate(`sy_admin_0123456789abcdef_${'x'.repeat(43)}`)).toBeNull();
    expect(await tokens.authenticate('sy_admin_nonsense')).toBeNull();
  });

  it('refuses a revoked or expired token with its own 401, and revokes only the owner’s', async () => {
    const { records, tokens } = setUp();
    const issued = await tokens.issue(ana, 'laptop', 1);
    expect(await outcome(tokens.revoke('bob', issued.id))).toMatchObject({ status: 404 });
    expect(await outcome(tokens.authenticate(issued.token))).toMatchObject({ tokenId: issued.id });
    expect(await tokens.revoke('ana', issued.id)).toMatchObject({
      status: 'revoked',
      revokedAt: expect.any(String),
    });
    expect(await outcome(tokens.authenticate(issued.token))).toMatchObject({
      status: 401,
      code: 'invalid_api_key',
      message: expect.stringMatching(/revoked/),
    });
    const old = await tokens.issue(ana, 'old', 1);
    records.tokens.get(old.id)!.expiresAt = new Date(Date.now() - 1000).toISOString();
    expect(await outcome(tokens.authenticate(old.token))).toMatchObject({
      status: 401,
      message: expect.stringMatching(/expired/),
    });
    expect((await tokens.list('ana')).map((t) => t.status)).toEqual(['revoked', 'expired']);
  });
});

describe('personal admin tokens: the token store unreachable', () => {
  it('answers 503 auth_unavailable, never a 500 and never a pass', async () => {
    const records = new InMemoryPersonalTokenRecords();
    const tokens = new PersonalTokens(records);
    const issued = await tokens.issue(ana, 'laptop', 1);
    records.read = () => Promise.reject(new Error('Connection is closed.'));
    expect(await outcome(tokens.authenticate(issued.token))).toMatchObject({
      status: 503,
      code: 'auth_unavailable',
    });
  });
});

describe('personal admin tokens: whom they act as', () => {
  it('merges the memberships granted now, and refuses a person left with no role', async () => {
    const members = new InMemoryTeamMemberRecords();
    const actors = new AdminActors(members);
    const holder = { tokenId: 'x', person: ana, signInRoles: [] };
    expect(await outcome(actors.ofPersonalToken(holder))).toMatchObject({
      status: 403,
      code: 'permission_denied',
      message: expect.stringMatching(/no role left/),
    });
    await members.put({
      team: 'b',
      subject: 'ana',
      role: 'team-member',
      grantedAt: '',
      grantedBy: 'admin-api',
    });
    expect(await actors.ofPersonalToken({ ...holder, signInRoles: [{ kind: 'org-viewer' }] })).toEqual({
      via: 'personal-token',
      person: ana,
      roles: [{ kind: 'org-viewer' }, { kind: 'team-member', team: 'b' }],
    });
  });
});

describe('personal admin tokens: guessing', () => {
  it('counts wrong tokens with wrong admin keys per address, then refuses that address, a right token included', async () => {
    const config = buildConfig({ admin: { apiKey: 'the-admin-key' } }, {});
    const metrics = new MetricsService(config, new InFlightTracker());
    const throttle = new AdminKeyThrottle(
      config,
      metrics,
      new AppLogger('silent', new Writable({ write: (_c, _e, done) => done() })),
      new MemoryFailureCounts(ADMIN_KEY_FAILURE_WINDOW_SECONDS),
    );
    const status = (promise: Promise<unknown>) =>
      promise.then(
        () => 200,
        (error: GatewayException) => error.status,
      );
    const right = () => Promise.resolve({ person: ana });
    const wrong = () => Promise.resolve(null);
    expect(await status(throttle.verifyPersonalToken(right, '192.0.2.9'))).toBe(200);
    for (let i = 0; i < 3; i++)
      expect(await status(throttle.verifyPersonalToken(wrong, '192.0.2.9'))).toBe(401);
    for (let i = 0; i < 2; i++)
      expect(await status(throttle.verify('wrong-key', '192.0.2.9', 'admin_api'))).toBe(401);
    expect(await status(throttle.verifyPersonalToken(wrong, '192.0.2.9'))).toBe(429);
    expect(await status(throttle.verifyPersonalToken(right, '192.0.2.9'))).toBe(429);
    expect(await status(throttle.verifyPersonalToken(right, '192.0.2.10'))).toBe(200);
    // A revoked or expired token's own 401 passes through uncounted.
    const revoked = () => Promise.reject(new GatewayException('invalid_api_key', 'revoked'));
    expect(await status(throttle.verifyPersonalToken(revoked, '192.0.2.10'))).toBe(401);
    const values = (await metrics.registry.getMetricsAsJSON()).find(
      (m) => m.name === 'switchyard_admin_auth_failures_total',
    )!.values;
    expect(values.map((v) => [v.labels.surface, v.labels.outcome, v.value]).sort()).toEqual(
      [
        ['admin_api', 'rejected', 2],
        ['personal_token', 'rejected', 3],
        ['personal_token', 'throttled', 1],
      ].sort(),
    );
  });
});
