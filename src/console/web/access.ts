// What the signed-in person may do, for hiding what they may not use. The answers come from the server's own
// permission table (src/access/permissions.ts, imported at build time: one table, nothing to keep in step). Hiding
// is a convenience: every refusal still comes from the admin API, and the page shows its message.
import { grantsEverywhere, grantsOn, teamsGranted, type Permission } from '../../access/permissions';
import { parseRole, type Role } from '../../access/roles';

let roles: Role[] = [];

/** The session's roles (`org-admin`, `team-admin:<team>`, ...), as GET /console/api/session answers them. */
export function useRoles(names: readonly string[]): void {
  roles = names.flatMap((name) => parseRole(name) ?? []);
}

/** May the person `permission` on `team` (or, without a team, everywhere: an org permission, or every team)? */
export function may(permission: Permission, team?: string): boolean {
  return team === undefined ? grantsEverywhere(roles, permission) : grantsOn(roles, permission, team);
}

/** The teams where the person holds `permission`: every team, or these (maybe none). */
export function teamsWhere(permission: Permission): 'all' | string[] {
  return teamsGranted(roles, permission);
}

/** Does the person hold `permission` anywhere (everywhere, or on one team at least)? */
export function mayAnywhere(permission: Permission): boolean {
  const teams = teamsWhere(permission);
  return teams === 'all' || teams.length > 0;
}
