/** The Nest injection token of the team memberships' repository (Redis in production). */
export const TEAM_MEMBER_RECORDS = Symbol('TeamMemberRecords');

export const MEMBER_ROLES = ['team-admin', 'team-member'] as const;
export type MemberRole = (typeof MEMBER_ROLES)[number];

/** A team role granted to a person (by their identity provider subject) in the admin API. */
export interface Membership {
  team: string;
  subject: string;
  role: MemberRole;
  grantedAt: string;
  /** The audit trail's actor of whoever granted it. */
  grantedBy: string;
}

/**
 * Granted memberships, readable both ways: a team's members (the admin API) and a person's teams (the auth
 * guard, on every admin call of a person, adds them to the roles the person signed in with).
 */
export interface TeamMemberRecords {
  /** Grants or replaces the person's role in the team. */
  put(membership: Membership): Promise<void>;
  find(team: string, subject: string): Promise<Membership | null>;
  ofTeam(team: string): Promise<Membership[]>;
  ofSubject(subject: string): Promise<Membership[]>;
  /** false when there was no such membership. */
  remove(team: string, subject: string): Promise<boolean>;
}
