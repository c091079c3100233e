import type { Role } from './roles';

type RoleKind = Role['kind'];

/**
 * What each role may do on the admin API: one row per permission, the roles that grant it, and whether it is
 * the organisation's (`org`: only org roles can hold it) or a team's (`team`: an org role holds it on every
 * team, a team role on its own team only), or the caller's own (`person`: every role holds it, and it reaches
 * only the caller's own things, such as their personal tokens). Every /admin/v1 route names the one permission it needs
 * (@Requires, requires.decorator.ts); the permission table in docs/api.md is this table (a unit test keeps them
 * equal). The console's page imports this file at build time (src/console/web/access.ts) to show each person
 * what their roles allow: it and what it imports stay free of packages (test/unit/console-access.spec.ts).
 *
 * Decided: team-member reads its team's usage and spend and nothing else (not even the team's settings), and
 * where its team allows it (`selfServiceTokens`) keeps team tokens of its own (`tokens:own`: issued, listed,
 * rotated and revoked by their owner alone; a team's tokens:read holders see every token with its owner).
 * `teams:adjust` is how a team-admin changes its team: models and limits anywhere within the ceiling an org-admin
 * set (`teams:write`), or within the current ones where there is none (admin/team-admin-changes.ts).
 */
export const PERMISSIONS = {
  'teams:create': { scope: 'org', grantedTo: ['org-admin'], what: 'create a team' },
  'teams:read': {
    scope: 'team',
    grantedTo: ['org-admin', 'org-viewer', 'team-admin'],
    what: "see a team's settings (models, limits, ceiling, labels)",
  },
  'teams:write': {
    scope: 'team',
    grantedTo: ['org-admin'],
    what: 'change any of a team: its ceiling, models and limits beyond it, labels, disable, enable, delete',
  },
  'teams:adjust': {
    scope: 'team',
    grantedTo: ['org-admin', 'team-admin'],
    what: "set a team's models and limits within its ceiling (none: within the current ones); let its members keep their own tokens, or not",
  },
  'tokens:read': {
    scope: 'team',
    grantedTo: ['org-admin', 'org-viewer', 'team-admin'],
    what: "list and see a team's tokens (never a secret)",
  },
  'tokens:write': {
    scope: 'team',
    grantedTo: ['org-admin', 'team-admin'],
    what: "issue, rotate and revoke a team's tokens (an issued or rotated secret is in that answer only)",
  },
  'tokens:own': {
    scope: 'team',
    grantedTo: ['org-admin', 'team-admin', 'team-member'],
    memberOnlyWhen: 'selfServiceTokens',
    what: "issue, list, rotate and revoke a team's tokens of your own (a person only; a team-member where the team allows it)",
  },
  'members:read': {
    scope: 'team',
    grantedTo: ['org-admin', 'org-viewer', 'team-admin'],
    what: "list and see a team's granted memberships",
  },
  'members:write': {
    scope: 'team',
    grantedTo: ['org-admin', 'team-admin'],
    what: 'grant and take away team-admin and team-member of a team',
  },
  'usage:read': {
    scope: 'team',
    grantedTo: ['org-admin', 'org-viewer', 'team-admin', 'team-member'],
    what: "read a team's usage counters and records (tokens and cost)",
  },
  'spend:read': {
    scope: 'team',
    grantedTo: ['org-admin', 'org-viewer', 'team-admin', 'team-member'],
    what: "read a team's budgets and what is spent of them",
  },
  'requests:read': {
    scope: 'team',
    grantedTo: ['org-admin', 'org-viewer', 'team-admin', 'team-member'],
    what: "read a team's request log: each request's entry, and what was sent and answered where the team keeps it",
  },
  'audit:read': {
    scope: 'team',
    grantedTo: ['org-admin', 'org-viewer', 'team-admin'],
    what: "read the audit trail (a team's entries: those whose target is the team or under it)",
  },
  'deployments:read': {
    scope: 'org',
    grantedTo: ['org-admin', 'org-viewer'],
    what: "see every deployment's health",
  },
  'prices:read': { scope: 'org', grantedTo: ['org-admin', 'org-viewer'], what: "see a model's prices" },
  'self:tokens': {
    scope: 'person',
    grantedTo: ['org-admin', 'org-viewer', 'team-admin', 'team-member'],
    what: 'see who you are; issue, list and revoke your own personal admin tokens (a person only)',
  },
  'people:read': {
    scope: 'org',
    grantedTo: ['org-admin', 'org-viewer'],
    what: "list anyone's personal admin tokens (never a secret)",
  },
  'people:write': { scope: 'org', grantedTo: ['org-admin'], what: "revoke anyone's personal admin tokens" },
} as const satisfies Record<
  string,
  {
    scope: 'org' | 'team' | 'person';
    grantedTo: readonly RoleKind[];
    /** A team-member holds it only on a team where this setting is on (the other roles listed hold it anyway). */
    memberOnlyWhen?: TeamSwitch;
    what: string;
  }
>;

export type Permission = keyof typeof PERMISSIONS;

/**
 * A team's own settings that some grants depend on: `selfServiceTokens` lets the team's members keep tokens of
 * their own (`tokens:own`). A team-admin or an org-admin turns it on or off (teams/team.store.ts); the check
 * reads it from the team's record whenever a team-member asks for such a permission (admin-access.ts).
 */
export type TeamSwitch = 'selfServiceTokens';
export type TeamSwitches = Partial<Record<TeamSwitch, boolean>>;

const grantedTo = (permission: Permission): readonly RoleKind[] => PERMISSIONS[permission].grantedTo;

/** The team setting a team-member's grant of `permission` waits on, if any. */
export function memberSwitchOf(permission: Permission): TeamSwitch | undefined {
  const row = PERMISSIONS[permission];
  return 'memberOnlyWhen' in row ? row.memberOnlyWhen : undefined;
}

/** Does a team role of `kind` hold `permission` on a team whose settings are `switches`? */
function teamRoleHolds(kind: RoleKind, permission: Permission, switches: TeamSwitches): boolean {
  if (!grantedTo(permission).includes(kind)) return false;
  const needed = kind === 'team-member' ? memberSwitchOf(permission) : undefined;
  return needed === undefined || switches[needed] === true;
}

/** The roles hold `permission` on every team (or, for an org permission, at all). */
export function grantsEverywhere(roles: readonly Role[], permission: Permission): boolean {
  const anyRole = PERMISSIONS[permission].scope === 'person';
  return roles.some((role) => (anyRole || !('team' in role)) && grantedTo(permission).includes(role.kind));
}

/**
 * The roles hold `permission` on `team`: everywhere, or by a team role of that team. `switches` are the team's
 * settings a grant may wait on (memberSwitchOf); without them such a grant is not held.
 */
export function grantsOn(
  roles: readonly Role[],
  permission: Permission,
  team: string,
  switches: TeamSwitches = {},
): boolean {
  if (grantsEverywhere(roles, permission)) return true;
  if (PERMISSIONS[permission].scope !== 'team') return false;
  return roles.some(
    (role) => 'team' in role && role.team === team && teamRoleHolds(role.kind, permission, switches),
  );
}

/**
 * Where the roles hold `permission`: every team, or these teams (maybe none). `switchesOf` gives a team's
 * settings for grants that wait on one (without it, such a grant is held nowhere).
 */
export function teamsGranted(
  roles: readonly Role[],
  permission: Permission,
  switchesOf: (team: string) => TeamSwitches = () => ({}),
): 'all' | string[] {
  if (grantsEverywhere(roles, permission)) return 'all';
  if (PERMISSIONS[permission].scope !== 'team') return [];
  const teams = roles.flatMap((role) =>
    'team' in role && teamRoleHolds(role.kind, permission, switchesOf(role.team)) ? [role.team] : [],
  );
  return [...new Set(teams)].sort();
}
