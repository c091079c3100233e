import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import {
  grantsEverywhere,
  grantsOn,
  memberSwitchOf,
  PERMISSIONS,
  teamsGranted,
  type Permission,
} from '../../src/access/permissions';
import { ROLE_KINDS, type Role } from '../../src/access/roles';

const ALL = Object.keys(PERMISSIONS) as Permission[];
/** The permissions held on a team (a person's own, held by every role, left out). */
const held = (roles: Role[], team: string) =>
  ALL.filter((p) => PERMISSIONS[p].scope !== 'person' && grantsOn(roles, p, team));

describe('the permission table (src/access/permissions.ts)', () => {
  it('gives org-admin everything, everywhere', () => {
    expect(ALL.filter((p) => !grantsEverywhere([{ kind: 'org-admin' }], p))).toEqual([]);
  });

  it('gives org-viewer every read and no change (but their own personal tokens)', () => {
    const viewer = ALL.filter((p) => grantsEverywhere([{ kind: 'org-viewer' }], p));
    expect(viewer).toEqual(ALL.filter((p) => p.endsWith(':read') || p === 'self:tokens'));
  });

  it('gives every role, and nothing but a role, their own personal tokens', () => {
    expect(ALL.filter((p) => PERMISSIONS[p].scope === 'person')).toEqual(['self:tokens']);
    for (const role of [
      { kind: 'org-admin' },
      { kind: 'org-viewer' },
      { kind: 'team-admin', team: 'a' },
      { kind: 'team-member', team: 'a' },
    ] as Role[])
      expect(grantsEverywhere([role], 'self:tokens')).toBe(true);
    expect(grantsEverywhere([], 'self:tokens')).toBe(false);
  });

  it("gives a team-admin their team's tokens, members, models and limits within its ceiling, usage, spend, request log and audit, on that team only", () => {
    const admin: Role[] = [{ kind: 'team-admin', team: 'a' }];
    expect(held(admin, 'a').sort()).toEqual(
      [
        'audit:read',
        'members:read',
        'members:write',
        'spend:read',
        'teams:adjust',
        'teams:read',
        'tokens:own',
        'tokens:read',
        'tokens:write',
        'usage:read',
        'requests:read',
      ].sort(),
    );
    expect(held(admin, 'b')).toEqual([]);
    expect(ALL.filter((p) => grantsEverywhere(admin, p))).toEqual(['self:tokens']);
  });

  it("gives a team-member their team's usage, spend and request log, nothing else", () => {
    expect(held([{ kind: 'team-member', team: 'a' }], 'a')).toEqual([
      'usage:read',
      'spend:read',
      'requests:read',
    ]);
  });

  it('gives a team-member their own tokens of their team only where the team allows it, and no one else waits on it', () => {
    const member: Role[] = [{ kind: 'team-member', team: 'a' }];
    const on = { selfServiceTokens: true };
    expect(ALL.filter((p) => grantsOn(member, p, 'a', on))).toEqual(
      expect.arrayContaining(['usage:read', 'spend:read', 'requests:read', 'tokens:own']),
    );
    expect(ALL.filter((p) => PERMISSIONS[p].scope !== 'person' && grantsOn(member, p, 'a', on))).toHaveLength(
      4,
    );
    expect(grantsOn(member, 'tokens:own', 'a', { selfServiceTokens: false })).toBe(false);
    expect(grantsOn(member, 'tokens:own', 'b', on)).toBe(false);
    expect(teamsGranted(member, 'tokens:own')).toEqual([]);
    expect(teamsGranted(member, 'tokens:own', () => on)).toEqual(['a']);
    // Only tokens:own waits on a setting; a team-admin and an org-admin hold it without one, a viewer never.
    expect(ALL.filter((p) => memberSwitchOf(p) !== undefined)).toEqual(['tokens:own']);
    expect(grantsOn([{ kind: 'team-admin', team: 'a' }], 'tokens:own', 'a')).toBe(true);
    expect(grantsEverywhere([{ kind: 'org-admin' }], 'tokens:own')).toBe(true);
    expect(grantsOn([{ kind: 'org-viewer' }], 'tokens:own', 'a', on)).toBe(false);
  });

  it('never lets a team role hold an org permission, and merges roles', () => {
    for (const p of ALL.filter((p) => PERMISSIONS[p].scope === 'org'))
      expect(PERMISSIONS[p].grantedTo.filter((kind) => kind.startsWith('team-'))).toEqual([]);
    const roles: Role[] = [
      { kind: 'team-member', team: 'b' },
      { kind: 'team-admin', team: 'a' },
      { kind: 'team-member', team: 'a' },
    ];
    expect(teamsGranted(roles, 'usage:read')).toEqual(['a', 'b']);
    expect(teamsGranted(roles, 'tokens:write')).toEqual(['a']);
    expect(teamsGranted(roles, 'deployments:read')).toEqual([]);
    expect(teamsGranted([{ kind: 'org-viewer' }], 'usage:read')).toBe('all');
    expect(grantsOn([], 'usage:read', 'a')).toBe(false);
  });

  it('is the table docs/api.md shows', () => {
    const doc = readFileSync(join(__dirname, '../../docs/api.md'), 'utf8');
    const section = doc.slice(doc.indexOf('### Roles and permissions'));
    const rows = [...section.matchAll(/^\| `([a-z]+:[a-z]+)` \| (org|team|person) \| ([^|]+) \|/gm)].map(
      ([, name, scope, roles]) => ({ name, scope, roles: roles.trim() }),
    );
    expect(rows).toEqual(
      ALL.map((name) => ({
        name,
        scope: PERMISSIONS[name].scope,
        roles: ROLE_KINDS.filter((kind) => (PERMISSIONS[name].grantedTo as readonly string[]).includes(kind))
          .map((kind) => `\`${kind}\``)
          .join(', '),
      })),
    );
  });
});
