import { Body, Controller, Delete, Get, Param, Put, Req } from '@nestjs/common';
import type { Request } from 'express';
import { Requires } from '../access/requires.decorator';
import type { Membership } from '../access/team-member-records.repository';
import { AdminOnly } from '../auth/route-access.decorators';
import { GatewayValidationPipe } from '../common/validation/validation.pipe';
import { auditActorOf } from './audit-actor';
import { TeamMembersService } from './team-members.service';
import { PutMemberDto } from './team-members.dto';

const strict = new GatewayValidationPipe({ strict: true });

/**
 * A team's members: people (by their identity provider's subject) granted team-admin or team-member here, on top
 * of the roles their sign-in carries; a grant or revocation applies from the person's next request.
 */
@AdminOnly()
@Controller('admin/v1/teams/:team/members')
export class TeamMembersController {
  constructor(private readonly members: TeamMembersService) {}

  @Get()
  @Requires('members:read', { team: 'team' })
  async list(@Param('team') team: string) {
    return { object: 'list', data: (await this.members.list(team)).map(memberView) };
  }

  @Get(':subject')
  @Requires('members:read', { team: 'team' })
  async get(@Param('team') team: string, @Param('subject') subject: string) {
    return memberView(await this.members.require(team, subject));
  }

  @Put(':subject')
  @Requires('members:write', { team: 'team' })
  async put(
    @Param('team') team: string,
    @Param('subject') subject: string,
    @Body(strict) body: PutMemberDto,
    @Req() req: Request,
  ) {
    return memberView(await this.members.grant(auditActorOf(req), team, subject, body.role));
  }

  @Delete(':subject')
  @Requires('members:write', { team: 'team' })
  async remove(@Param('team') team: string, @Param('subject') subject: string, @Req() req: Request) {
    await this.members.revoke(auditActorOf(req), team, subject);
    return { object: 'team.member', team, subject, deleted: true };
  }
}

function memberView(membership: Membership) {
  return { object: 'team.member', ...membership };
}
