import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { PERMISSIONS, type Permission, type TeamSwitch } from '../../src/access/permissions';
import type { Role } from '../../src/access/roles';
import { signedIn, type SignedIn } from '../support/admin-actors';
import { OpenAIUpstream } from '../support/openai-upstream';
import { hashToken } from '../../src/auth/token-format';
import { ADMIN_KEY, startTestGateway, type TestGateway } from '../support/test-gateway';

/** What openapi.json says an admin route requires (x-permission, from its @Requires). */
interface XPermission {
  name: Permission;
  /** A team-member holds it only on a team with this setting on. */
  memberOnlyWhen?: TeamSwitch;
  team?: string;
  teamQuery?: string;
  token?: string;
}

const A = 'matrix-a';
const B = 'matrix-b';
/** Team A's settings that grants wait on: on, so a team-member of A holds what waits on them (off: see below). */
const A_SWITCHES: Record<TeamSwitch, boolean> = { selfServiceTokens: true };

/** The actors of the matrix: each role, and a team-admin of team B acting on team A. */
const ROLES: Record<string, Role[]> = {
  'org-admin': [{ kind: 'org-admin' }],
  'org-viewer': [{ kind: 'org-viewer' }],
  'team-admin of A': [{ kind: 'team-admin', team: A }],
  'team-member of A': [{ kind: 'team-member', team: A }],
  'team-admin of B': [{ kind: 'team-admin', team: B }],
};

/**
 * The role matrix, generated from /openapi.json: every /admin/v1 route, called by every role on team A, is
 * refused with 403 permission_denied exactly when the permission table (src/access/permissions.ts) says so, and
 * otherwise gets past the guard (any answer but 401, 403 and 5xx). Changes are sent with a body or query that
 * fails validation, which runs after the guard, so an allowed call changes nothing (the few routes that take
 * neither change team A reversibly: disable, enable, revoke). No answer shows a secret to anyone.
 */
describe('admin API: every route against every role', () => {
  let upstream: OpenAIUpstream;
  let gw: TestGateway;
  let operations: Array<{ method: string; path: string; permission: XPermission | undefined }>;
  let tokenId: string;
  /** What no admin read may show anyone: the admin key, a backend's key, a token's secret or its stored hash. */
  let secrets: string[];
  const actors: Record<string, SignedIn> = {};

  beforeAll(async () => {
    upstream = await new OpenAIUpstream().start();
    gw = await startTestGateway({ upstreamUrl: upstream.url });
    const issued = await gw.teamToken(A);
    tokenId = issued.id;
    secrets = [ADMIN_KEY, 'upstream-secret-key', issued.token, hashToken(issued.token)];
    await gw.teamToken(B);
    expect((await gw.admin('PATCH', `/admin/v1/teams/${A}`, A_SWITCHES)).status).toBe(200);
    for (const [name, roles] of Object.entries(ROLES))
      actors[name] = await signedIn(gw, { subject: `matrix-${name.replace(/\W+/g, '-')}` }, roles);
    const document = (await (await fetch(`${gw.url}/openapi.json`)).json()) as {
      paths: Record<string, Record<string, { 'x-permission'?: XPermission }>>;
    };
    operations = Object.entries(document.paths)
      .filter(([path]) => path.startsWith('/admin/v1/'))
      .flatMap(([path, methods]) =>
        Object.entries(methods).map(([method, operation]) => ({
          method: method.toUpperCase(),
          path,
          permission: operation['x-permission'],
        })),
      );
  });
  afterAll(async () => {
    await gw.close();
    await upstream.stop();
  });

  it('finds a permission on every admin route, and no change a viewer may make', () => {
    expect(operations.length).toBeGreaterThanOrEqual(22);
    expect(operations.filter((op) => !op.permission).map((op) => `${op.method} ${op.path}`)).toEqual([]);
    const viewerChanges = operations.filter(
      (op) =>
        op.method !== 'GET' &&
        // A person's own (their personal tokens) is theirs to change, whatever their role.
        PERMISSIONS[op.permission!.name].scope !== 'person' &&
        (PERMISSIONS[op.permission!.name].grantedTo as readonly string[]).includes('org-viewer'),
    );
    expect(viewerChanges.map((op) => `${op.method} ${op.path}`)).toEqual([]);
  });

  it("declares on each route the permission docs/api.md gives it, and where the route's team is", () => {
    const doc = readFileSync(join(__dirname, '../../docs/api.md'), 'utf8');
    const documented = [
      ...doc.matchAll(
        /^\| `((?:GET|POST|PUT|PATCH|DELETE) \/admin\/v1\/[^`]*)` \| `([a-z]+:[a-z]+)` \|([^|]*)\|$/gm,
      ),
    ]
      .map(([, route, permission, team]) => `${route} ${permission} ${team.trim()}`.trim())
      .sort();
    // A team permission on a route that names no team: a list shows the caller's teams, one thing (by its id) is
    // found only among them.
    const where = (p: XPermission, path: string) =>
      p.team
        ? `\`{${p.team}}\``
        : p.token
          ? "the token's"
          : p.teamQuery
            ? `\`?${p.teamQuery}=\``
            : PERMISSIONS[p.name].scope === 'team'
              ? path.endsWith('}')
                ? "one of the caller's"
                : "lists the caller's"
              : '';
    const declared = operations
      .map(({ method, path, permission }) =>
        `${method} ${path} ${permission!.name} ${where(permission!, path)}`.trim(),
      )
      .sort();
    // Query routes document what they do without the parameter too (`?team=`, else lists the caller's).
    expect(documented.map((line) => line.replace(/, else lists the caller's$/, ''))).toEqual(declared);
  });

  /**
   * Allowed by the table, read here on its own terms (not by the code that enforces it): an org role where its
   * kind is listed; a team role where its kind is listed on a team permission, for its own team, or on a list
   * across teams (which then shows its own team).
   */
  const expectedAllowed = (name: string, permission: XPermission): boolean => {
    const [role] = ROLES[name];
    const { scope, grantedTo } = PERMISSIONS[permission.name];
    if (!(grantedTo as readonly string[]).includes(role.kind)) return false;
    if (!('team' in role) || scope === 'person') return true;
    if (role.kind === 'team-member' && permission.memberOnlyWhen && !A_SWITCHES[permission.memberOnlyWhen])
      return false;
    const namesATeam = Boolean(permission.team || permission.teamQuery || permission.token);
    return scope === 'team' && (!namesATeam || role.team === A);
  };

  const requestFor = (method: string, path: string, permission: XPermission) => {
    const url = path
      .replace('{team}', A)
      .replace('{id}', tokenId)
      .replace('{model}', 'echo')
      .replace('{subject}', 'nobody-granted');
    // (a person's own tokens: {id} is a team token's id, so a revoke finds nothing of theirs: 404)
    const query = new URLSearchParams();
    if (permission.teamQuery) query.set(permission.teamQuery, A);
    if (method === 'DELETE' && path === '/admin/v1/teams/{team}') query.set('force', 'not-a-boolean');
    const body =
      method === 'POST' || method === 'PUT' || method === 'PATCH' ? { notAField: true } : undefined;
    return { url: query.size ? `${url}?${query}` : url, body };
  };

  it('refuses a team-member every route that waits on a setting their team turned off, and lets them in once it is on', async () => {
    const waiting = operations.filter((op) => op.permission?.memberOnlyWhen);
    expect(waiting.length).toBeGreaterThanOrEqual(4);
    const outcomes = async () => {
      const got: string[] = [];
      for (const { method, path, permission } of waiting) {
        const { url, body } = requestFor(method, path, permission!);
        const response = await actors['team-member of A'].call(method, url, body);
        got.push(response.status === 403 ? response.body.error.code : 'allowed');
      }
      return got;
    };
    const switchA = async (on: boolean) =>
      expect(
        (
          await gw.admin('PATCH', `/admin/v1/teams/${A}`, {
            [waiting[0].permission!.memberOnlyWhen!]: on,
          })
        ).status,
      ).toBe(200);
    await switchA(false);
    try {
      expect(await outcomes()).toEqual(waiting.map(() => 'permission_denied'));
    } finally {
      await switchA(true);
    }
    expect(await outcomes()).toEqual(waiting.map(() => 'allowed'));
  });

  it.each(Object.keys(ROLES))('%s: allowed or 403 permission_denied, as the table says', async (name) => {
    const outcomes: string[] = [];
    const wrong: string[] = [];
    for (const { method, path, permission } of operations) {
      const { url, body } = requestFor(method, path, permission!);
      const response = await actors[name].call(method, url, body);
      const allowed = expectedAllowed(name, permission!);
      const refused = response.status === 403 && response.body?.error?.code === 'permission_denied';
      const got = refused ? 'refused' : `${response.status}`;
      outcomes.push(`${method} ${path}: ${got}`);
      if (allowed ? refused || response.status === 401 || response.status >= 500 : !refused)
        wrong.push(
          `${method} ${path}: expected ${allowed ? 'allowed' : 'refused'}, got ${response.status} ${JSON.stringify(response.body)}`,
        );
      for (const secret of secrets)
        if (JSON.stringify(response.body ?? '').includes(secret))
          wrong.push(`${method} ${path} shows a secret`);
      if (refused) expect(response.body.error).toMatchObject({ type: 'invalid_request_error', param: null });
    }
    expect(wrong).toEqual([]);
    // Every role is refused something, and allowed something: the matrix is not trivially one-sided.
    expect(outcomes.some((o) => o.endsWith('refused')) || name === 'org-admin').toBe(true);
    expect(outcomes.some((o) => !o.endsWith('refused'))).toBe(true);
  });
});
