import 'reflect-metadata';
import { IsIn } from 'class-validator';
import { MEMBER_ROLES, type MemberRole } from '../access/team-member-records.repository';

export class PutMemberDto {
  /** team-admin (the team's tokens, members, narrowing, usage, spend, audit) or team-member (usage and spend). */
  @IsIn(MEMBER_ROLES) role!: MemberRole;
}
