import { Inject, Injectable } from '@nestjs/common';
import type { Request } from 'express';
import { BREAK_GLASS_ROLES, type AdminActor, type Role } from '../access/roles';
import { TEAM_MEMBER_RECORDS, type TeamMemberRecords } from '../access/team-member-records.repository';
import { GatewayException } from '../core/errors/gateway.exception';
import type { ConsoleSession } from './console-sessions';
import type { PersonalTokenHolder } from './personal-tokens';

declare module 'express-serve-static-core' {
  interface Request {
    /** Set by the AuthGuard on every admin API call: who calls, by which credential, with which roles. */
    adminActor?: AdminActor;
  }
}

/**
 * Who calls the admin API. The admin key, and a console session opened with it, are break-glass (org-admin). A
 * person's session carries the roles they signed in with, plus the memberships granted to their subject in the
 * admin API, read on every call: a grant or a revocation takes effect at the person's next request. A personal
 * token acts with its person's roles of their last sign-in (stored then) plus their memberships, read the same way.
 */
@Injectable()
export class AdminActors {
  constructor(@Inject(TEAM_MEMBER_RECORDS) private readonly members: TeamMemberRecords) {}

  ofAdminKey(req: Request): AdminActor {
    const named = req.headers['x-switchyard-actor'];
    // An operator's own label, not a credential: kept short and plain for the audit trail.
    const label = typeof named === 'string' ? named.replace(/[^\w.@:-]/g, '').slice(0, 64) : '';
    return { via: 'admin-key', roles: BREAK_GLASS_ROLES, ...(label ? { label } : {}) };
  }

  async ofSession(session: ConsoleSession): Promise<AdminActor> {
    if (!session.person)
      return { via: 'console', roles: session.roles ?? BREAK_GLASS_ROLES, label: session.actor };
    const roles = await this.withMemberships(session.person.subject, session.roles ?? BREAK_GLASS_ROLES);
    return { via: 'console', person: session.person, roles, label: session.actor };
  }

  /**
   * A personal token's actor. A person left with no role (their groups map to none since their last sign-in, and no
   * membership) is refused: the token stands for nobody the console would let in.
   */
  async ofPersonalToken({ person, signInRoles }: PersonalTokenHolder): Promise<AdminActor> {
    const roles = await this.withMemberships(person.subject, signInRoles);
    if (roles.length === 0)
      throw new GatewayException(
        'permission_denied',
        `${person.email ?? person.subject} has no role left: their last sign-in gave none and no team membership is granted.`,
      );
    return { via: 'personal-token', person, roles };
  }

  /** The roles a person signed in with, plus the memberships granted to their subject now. */
  private async withMemberships(subject: string, signInRoles: readonly Role[]): Promise<Role[]> {
    const granted = await this.members.ofSubject(subject).catch((cause: unknown) => {
      // Without its memberships a person's roles are unknown: neither more nor fewer may be assumed.
      throw new GatewayException(
        'auth_unavailable',
        "The person's memberships cannot be read; try again shortly.",
        {
          headers: { 'retry-after': '1' },
          cause,
        },
      );
    });
    return [
      ...signInRoles,
      ...granted.map((membership) => ({ kind: membership.role, team: membership.team })),
    ];
  }
}
