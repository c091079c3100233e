import { ID_PATTERN } from '../core/ids';

/**
 * Who may do what on the admin API (issue: people, roles and teams that run themselves). One vocabulary for the
 * sign-in (roles from the identity provider's groups), the sessions and tokens that carry them, the guard that
 * enforces them and the audit trail that names the person.
 */

/** A role: the organisation's (`org-admin` everything, `org-viewer` reads everything but secrets) or a team's. */
export type Role =
  | { kind: 'org-admin' }
  | { kind: 'org-viewer' }
  | { kind: 'team-admin'; team: string }
  | { kind: 'team-member'; team: string };

export const ROLE_KINDS = ['org-admin', 'org-viewer', 'team-admin', 'team-member'] as const;

/** The person behind a call, as their identity provider named them at sign-in. */
export interface Person {
  /** The ID token's `sub` (stable per provider). */
  subject: string;
  email?: string;
  name?: string;
}

/** Who calls the admin API, by which credential, with which roles. */
export interface AdminActor {
  /** The break-glass admin key, a console session, or a person's own admin token. */
  via: 'admin-key' | 'console' | 'personal-token';
  /** Absent for the admin key and an admin-key console sign-in (nobody the identity provider knows). */
  person?: Person;
  roles: readonly Role[];
  /**
   * The name the caller gave, a label and not an identity: an admin-key console sign-in's name, or
   * `X-Switchyard-Actor` sent with the admin key. The audit trail shows it where there is no person.
   */
  label?: string;
}

/** The admin key, and a console session opened with it, can do everything. */
export const BREAK_GLASS_ROLES: readonly Role[] = [{ kind: 'org-admin' }];

/**
 * A role as config and the API spell it: `org-admin`, `org-viewer`, `team-admin:<team>`, `team-member:<team>`.
 * Undefined for anything else (the caller says what was wrong where).
 */
export function parseRole(text: string): Role | undefined {
  if (text === 'org-admin' || text === 'org-viewer') return { kind: text };
  const [kind, team] = text.split(/:(.*)/s, 2);
  if ((kind !== 'team-admin' && kind !== 'team-member') || team === undefined || !ID_PATTERN.test(team))
    return undefined;
  return { kind, team };
}

export function formatRole(role: Role): string {
  return 'team' in role ? `${role.kind}:${role.team}` : role.kind;
}
