import { Inject, Injectable } from '@nestjs/common';
import {
  TEAM_MEMBER_RECORDS,
  type MemberRole,
  type Membership,
  type TeamMemberRecords,
} from '../access/team-member-records.repository';
import { AuditLog, type Actor } from '../audit/audit.log';
import { GatewayException } from '../core/errors/gateway.exception';
import { TeamStore } from '../teams/team.store';

/** An identity provider's subject: printable, no spaces, at most 255 characters (OpenID Connect's own bound). */
const SUBJECT = /^[\x21-\x7e]{1,255}$/;

/** Team memberships granted in the admin API, audited like every admin change. */
@Injectable()
export class TeamMembersService {
  constructor(
    @Inject(TEAM_MEMBER_RECORDS) readonly records: TeamMemberRecords,
    private readonly teams: TeamStore,
    private readonly audit: AuditLog,
  ) {}

  async list(team: string): Promise<Membership[]> {
    await this.teams.require(team);
    return this.records.ofTeam(team);
  }

  async require(team: string, subject: string): Promise<Membership> {
    const found = await this.records.find(team, checkedSubject(subject));
    if (!found) throw notFound(team, subject);
    return found;
  }

  async grant(by: Actor, team: string, subject: string, role: MemberRole): Promise<Membership> {
    await this.teams.require(team);
    const membership = {
      team,
      subject: checkedSubject(subject),
      role,
      grantedAt: new Date().toISOString(),
      grantedBy: by.actor,
    };
    await this.records.put(membership);
    await this.audit.write(by, 'member.grant', `team/${team}/member/${subject}`, { role });
    return membership;
  }

  async revoke(by: Actor, team: string, subject: string): Promise<void> {
    if (!(await this.records.remove(team, checkedSubject(subject)))) throw notFound(team, subject);
    await this.audit.write(by, 'member.revoke', `team/${team}/member/${subject}`);
  }

  /** With its team: a team made again under the same id starts with no members. */
  async removeTeam(team: string): Promise<void> {
    for (const { subject } of await this.records.ofTeam(team)) await this.records.remove(team, subject);
  }
}

export function checkedSubject(subject: string): string {
  if (!SUBJECT.test(subject))
    throw new GatewayException(
      'invalid_request',
      'subject must be 1-255 printable characters without spaces.',
      {
        param: 'subject',
        wireCode: null,
      },
    );
  return subject;
}

function notFound(team: string, subject: string): GatewayException {
  return new GatewayException(
    'member_not_found',
    `No membership of "${subject}" in team "${team}" was granted here (roles from the identity provider are not listed).`,
  );
}
