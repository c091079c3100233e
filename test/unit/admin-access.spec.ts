import { Controller, Get } from '@nestjs/common';
import { DiscoveryService, MetadataScanner, Reflector } from '@nestjs/core';
import type { ExecutionContext } from '@nestjs/common';
import type { Request } from 'express';
import { AdminAccess } from '../../src/access/admin-access';
import { DeclaredRoutes } from '../../src/access/declared-routes';
import { REQUIRES, Requires, type Requirement } from '../../src/access/requires.decorator';
import { BREAK_GLASS_ROLES, type AdminActor, type Role } from '../../src/access/roles';
import { AdminActors } from '../../src/auth/admin-actors';
import { AuthGuard } from '../../src/auth/auth.guard';
import { ConsoleSessions } from '../../src/auth/console-sessions';
import type { ConsoleSessionRecords } from '../../src/auth/console-session-records.repository';
import { AdminOnly, ROUTE_ACCESS } from '../../src/auth/route-access.decorators';
import type { TokenStore } from '../../src/auth/token.store';
import type { GatewayConfig } from '../../src/config/config.schema';
import type { Team, TeamStore } from '../../src/teams/team.store';
import { GatewayException } from '../../src/core/errors/gateway.exception';
import { InMemoryTeamMemberRecords } from '../support/in-memory-team-member-records';

const person = { subject: 'idp|ana', email: 'ana@example.com' };
/** A token store that knows one token, of team `a`. */
const tokens = {
  require: async (id: string) => {
    if (id !== 'tok-a') throw new GatewayException('token_not_found', 'no such token');
    return { id, team: 'a' };
  },
} as unknown as TokenStore;

/** Teams as the access check reads them: `own-ok` lets its members keep their own tokens, `own-off` does not. */
class FakeTeams {
  reads: string[] = [];
  readonly switches: Record<string, boolean> = { 'own-ok': true, 'own-off': false };
  async get(id: string) {
    this.reads.push(id);
    return id in this.switches ? ({ id, selfServiceTokens: this.switches[id] } as unknown as Team) : null;
  }
  asStore(): TeamStore {
    return this as unknown as TeamStore;
  }
}

function request(parts: Partial<Request> = {}): Request {
  return { method: 'GET', headers: {}, params: {}, query: {}, ...parts } as Request;
}

async function refusal(promise: Promise<unknown>): Promise<{ status: number; code: string } | 'allowed'> {
  try {
    await promise;
    return 'allowed';
  } catch (error) {
    const e = error as GatewayException;
    return { status: e.status, code: e.code };
  }
}

const denied = { status: 403, code: 'permission_denied' };

describe('AdminAccess: a route requirement held against an actor', () => {
  const teams = new FakeTeams();
  const access = new AdminAccess(tokens, teams.asStore());
  const actor = (roles: Role[]): AdminActor => ({ via: 'console', person, roles });
  const check = (roles: Role[], requirement: Requirement, req = request()) =>
    refusal(access.check(actor(roles), requirement, req));
  const teamAdminA: Role[] = [{ kind: 'team-admin', team: 'a' }];

  it("finds the route's team in a path param, a query param or a token's team", async () => {
    const onTeam = { permission: 'tokens:write', target: { team: 'team' } } as const;
    expect(await check(teamAdminA, onTeam, request({ params: { team: 'a' } }))).toBe('allowed');
    expect(await check(teamAdminA, onTeam, request({ params: { team: 'b' } }))).toEqual(denied);
    const onToken = { permission: 'tokens:write', target: { token: 'id' } } as const;
    expect(await check(teamAdminA, onToken, request({ params: { id: 'tok-a' } }))).toBe('allowed');
    expect(
      await check([{ kind: 'team-admin', team: 'b' }], onToken, request({ params: { id: 'tok-a' } })),
    ).toEqual(denied);
    expect(await check(teamAdminA, onToken, request({ params: { id: 'nope' } }))).toEqual({
      status: 404,
      code: 'token_not_found',
    });
    const onQuery = { permission: 'usage:read', target: { teamQuery: 'team' } } as const;
    const member: Role[] = [{ kind: 'team-member', team: 'a' }];
    expect(await check(member, onQuery, request({ query: { team: 'a' } }))).toBe('allowed');
    expect(await check(member, onQuery, request({ query: { team: 'b' } }))).toEqual(denied);
  });

  it('lets a list across teams through when the actor holds the permission on some team; org permissions need an org role', async () => {
    expect(await check(teamAdminA, { permission: 'teams:read', target: {} })).toBe('allowed');
    expect(
      await check([{ kind: 'team-member', team: 'a' }], { permission: 'teams:read', target: {} }),
    ).toEqual(denied);
    expect(await check(teamAdminA, { permission: 'deployments:read', target: {} })).toEqual(denied);
    expect(await check([{ kind: 'org-viewer' }], { permission: 'deployments:read', target: {} })).toBe(
      'allowed',
    );
    expect(await check([], { permission: 'usage:read', target: { teamQuery: 'team' } })).toEqual(denied);
    // An org role needs no team (and the token is not even looked up).
    expect(
      await check(
        BREAK_GLASS_ROLES as Role[],
        { permission: 'tokens:write', target: { token: 'id' } },
        request({ params: { id: 'nope' } }),
      ),
    ).toBe('allowed');
  });
});

describe("AdminAccess: a team-member's own tokens wait on the team's setting", () => {
  const ownTokens = { permission: 'tokens:own', target: { team: 'team' } } as const;
  const onTeam = (team: string) => request({ params: { team } });
  const actor = (roles: Role[]): AdminActor => ({ via: 'console', person, roles });

  it("lets a team-member keep their own tokens only where their team allows it, reading the team's record now", async () => {
    const teams = new FakeTeams();
    const access = new AdminAccess(tokens, teams.asStore());
    const check = (roles: Role[], team: string) =>
      refusal(access.check(actor(roles), ownTokens, onTeam(team)));
    expect(await check([{ kind: 'team-member', team: 'own-ok' }], 'own-ok')).toBe('allowed');
    expect(await check([{ kind: 'team-member', team: 'own-off' }], 'own-off')).toEqual(denied);
    // A member of a team that allows it holds nothing on another team, even one that allows it too.
    teams.switches['other-ok'] = true;
    expect(await check([{ kind: 'team-member', team: 'own-ok' }], 'other-ok')).toEqual(denied);
    // No such team: no setting on (and the route answers for the team itself once let through).
    expect(await check([{ kind: 'team-member', team: 'gone' }], 'gone')).toEqual(denied);
    // The team turns it off: refused from the next check on.
    teams.switches['own-ok'] = false;
    expect(await check([{ kind: 'team-member', team: 'own-ok' }], 'own-ok')).toEqual(denied);
  });

  it('lets a team-admin and an org-admin keep their own tokens whatever the setting; an org-viewer never', async () => {
    const teams = new FakeTeams();
    const access = new AdminAccess(tokens, teams.asStore());
    const check = (roles: Role[], team: string) =>
      refusal(access.check(actor(roles), ownTokens, onTeam(team)));
    expect(await check([{ kind: 'team-admin', team: 'own-off' }], 'own-off')).toBe('allowed');
    expect(await check([{ kind: 'org-admin' }], 'own-off')).toBe('allowed');
    expect(await check([{ kind: 'org-viewer' }], 'own-ok')).toEqual(denied);
    expect(await check([{ kind: 'team-admin', team: 'own-ok' }], 'own-off')).toEqual(denied);
  });

  it('reads no team for a permission that waits on no setting', async () => {
    const teams = new FakeTeams();
    const access = new AdminAccess(tokens, teams.asStore());
    const member: Role[] = [{ kind: 'team-member', team: 'own-ok' }];
    const usage = { permission: 'usage:read', target: { team: 'team' } } as const;
    expect(await refusal(access.check(actor(member), usage, onTeam('own-ok')))).toBe('allowed');
    expect(teams.reads).toEqual([]);
  });

  it("lists the teams of a person's team roles where they may keep their own tokens", async () => {
    const access = new AdminAccess(tokens, new FakeTeams().asStore());
    const roles: Role[] = [
      { kind: 'team-member', team: 'own-off' },
      { kind: 'team-member', team: 'own-ok' },
      { kind: 'team-admin', team: 'led' },
      { kind: 'org-viewer' },
    ];
    expect(await access.teamsOfTeamRoles(actor(roles), 'tokens:own')).toEqual(['led', 'own-ok']);
    expect(await access.teamsOfTeamRoles(actor([{ kind: 'org-admin' }]), 'tokens:own')).toEqual([]);
  });
});

describe('AdminActors: who calls', () => {
  it('makes the admin key break-glass, with its X-Switchyard-Actor label cleaned', () => {
    const actors = new AdminActors(new InMemoryTeamMemberRecords());
    expect(actors.ofAdminKey(request({ headers: { 'x-switchyard-actor': 'ops <bob>' } }))).toEqual({
      via: 'admin-key',
      roles: BREAK_GLASS_ROLES,
      label: 'opsbob',
    });
  });

  it("adds a person's granted memberships to the roles of their session, and no one else's", async () => {
    const members = new InMemoryTeamMemberRecords();
    const actors = new AdminActors(members);
    const session = {
      actor: person.email,
      csrf: 'x',
      expiresAt: '',
      person,
      roles: [{ kind: 'org-viewer' }] as Role[],
    };
    await members.put({
      team: 'a',
      subject: person.subject,
      role: 'team-admin',
      grantedAt: '',
      grantedBy: '',
    });
    await members.put({
      team: 'b',
      subject: 'idp|someone-else',
      role: 'team-admin',
      grantedAt: '',
      grantedBy: '',
    });
    expect(await actors.ofSession(session)).toEqual({
      via: 'console',
      person,
      label: person.email,
      roles: [{ kind: 'org-viewer' }, { kind: 'team-admin', team: 'a' }],
    });
    await members.remove('a', person.subject);
    expect((await actors.ofSession(session)).roles).toEqual([{ kind: 'org-viewer' }]);
    // An admin-key sign-in: no person, every role.
    expect(await actors.ofSession({ actor: 'ops', csrf: 'x', expiresAt: '' })).toEqual({
      via: 'console',
      label: 'ops',
      roles: BREAK_GLASS_ROLES,
    });
  });
  it("answers 503 auth_unavailable when a person's memberships cannot be read", async () => {
    const members = new InMemoryTeamMemberRecords();
    members.ofSubject = () => Promise.reject(new Error('Connection is closed.'));
    const session = { actor: 'ana', csrf: 'x', expiresAt: '', person, roles: [] };
    expect(await refusal(new AdminActors(members).ofSession(session))).toEqual({
      status: 503,
      code: 'auth_unavailable',
    });
  });
});

describe('AuthGuard: an admin route called from a console session', () => {
  @AdminOnly()
  @Controller('admin/v1/things')
  class ThingsController {
    @Get(':team')
    @Requires('tokens:write', { team: 'team' })
    write() {}

    @Get()
    forgotten() {}
  }

  const sessions = new Map<string, string>();
  const records: ConsoleSessionRecords = {
    save: async (digest, session) => void sessions.set(digest, session),
    find: async (digest) => sessions.get(digest) ?? null,
    remove: async (digest) => void sessions.delete(digest),
  };
  const config = { console: { enabled: true, sessionTtlSeconds: 60 } } as GatewayConfig;
  const consoleSessions = new ConsoleSessions(records, config);
  const guard = new AuthGuard(
    new Reflector(),
    {} as never,
    consoleSessions,
    {} as never,
    new AdminActors(new InMemoryTeamMemberRecords()),
    new AdminAccess(tokens, new FakeTeams().asStore()),
    {} as never,
    config,
  );
  const call = async (roles: Role[], handler: () => void, team: string) => {
    const { id, session } = await consoleSessions.open(person.email, { person, roles });
    const req = request({
      method: 'POST',
      headers: { cookie: `sy_console=${id}`, 'x-csrf-token': session.csrf },
      params: { team },
    });
    const context = {
      getHandler: () => handler,
      getClass: () => ThingsController,
      switchToHttp: () => ({ getRequest: () => req }),
    } as unknown as ExecutionContext;
    return { req, outcome: await refusal(guard.canActivate(context)) };
  };
  const teamAdminA: Role[] = [{ kind: 'team-admin', team: 'a' }];

  it('puts the actor on the request when the roles allow the route, and refuses otherwise', async () => {
    const allowed = await call(teamAdminA, ThingsController.prototype.write, 'a');
    expect(allowed.outcome).toBe('allowed');
    expect(allowed.req.adminActor).toEqual({
      via: 'console',
      person,
      roles: teamAdminA,
      label: person.email,
    });
    const refused = await call(teamAdminA, ThingsController.prototype.write, 'b');
    expect(refused.outcome).toEqual(denied);
    expect(refused.req.adminActor).toBeUndefined();
    expect((await call([{ kind: 'org-viewer' }], ThingsController.prototype.write, 'a')).outcome).toEqual(
      denied,
    );
  });

  it('refuses an admin route that declares no permission, even to an org-admin', async () => {
    expect((await call([{ kind: 'org-admin' }], ThingsController.prototype.forgotten, 'a')).outcome).toEqual(
      denied,
    );
  });

  it('stops the gateway from starting with such a route (DeclaredRoutes)', () => {
    const discovery = {
      getControllers: () => [{ metatype: ThingsController }],
    } as unknown as DiscoveryService;
    const routes = new DeclaredRoutes(discovery, new MetadataScanner(), new Reflector());
    expect(() => routes.onModuleInit()).toThrow(/GET \/admin\/v1\/things(?!\/)/);
    expect(Reflect.getMetadata(ROUTE_ACCESS, ThingsController)).toBe('admin');
    Reflect.deleteMetadata(REQUIRES, ThingsController.prototype.forgotten);
    Reflect.defineMetadata(
      REQUIRES,
      { permission: 'teams:read', target: {} },
      ThingsController.prototype.forgotten,
    );
    routes.onModuleInit();
    expect(routes.all().map((r) => r.route)).toEqual(['GET /admin/v1/things/{team}', 'GET /admin/v1/things']);
  });
});
