import { Body, Controller, Delete, Get, HttpCode, Param, Post, Req } from '@nestjs/common';
import type { Request } from 'express';
import { AdminAccess } from '../access/admin-access';
import { Requires } from '../access/requires.decorator';
import { formatRole, type Person } from '../access/roles';
import { AdminOnly } from '../auth/route-access.decorators';
import { GatewayValidationPipe } from '../common/validation/validation.pipe';
import { auditActorOf } from './audit-actor';
import { personOf as personOfRequest } from './person-of';
import { CreatePersonalTokenDto } from './personal-tokens.dto';
import { PersonalTokensAdminService } from './personal-tokens-admin.service';

const strict = new GatewayValidationPipe({ strict: true });
const personOf = (req: Request): Person => personOfRequest(req, 'Personal admin tokens');

/**
 * Who the caller is, and personal admin tokens: a person's own (`/me`), and anyone's for org roles
 * (`/people/{subject}/tokens`). Only a person has personal tokens: the admin key is nobody the identity
 * provider knows, so it may see who it is but not make one.
 */
@AdminOnly()
@Controller('admin/v1')
export class PersonalTokensController {
  constructor(
    private readonly tokens: PersonalTokensAdminService,
    private readonly access: AdminAccess,
  ) {}

  /** `own_token_teams`: the teams of the caller's team roles where they may keep team tokens of their own. */
  @Get('me')
  @Requires('self:tokens')
  async me(@Req() req: Request) {
    const actor = req.adminActor!;
    return {
      object: 'admin.actor',
      via: actor.via,
      person: actor.person ?? null,
      roles: actor.roles.map(formatRole),
      own_token_teams: actor.person ? await this.access.teamsOfTeamRoles(actor, 'tokens:own') : [],
    };
  }

  @Post('me/tokens')
  @HttpCode(201)
  @Requires('self:tokens')
  issue(@Body(strict) body: CreatePersonalTokenDto, @Req() req: Request) {
    return this.tokens.issue(auditActorOf(req), personOf(req), body.name, body.expiresInDays);
  }

  @Get('me/tokens')
  @Requires('self:tokens')
  async mine(@Req() req: Request) {
    return { object: 'list', data: await this.tokens.list(personOf(req).subject) };
  }

  @Delete('me/tokens/:id')
  @Requires('self:tokens')
  revokeMine(@Param('id') id: string, @Req() req: Request) {
    return this.tokens.revoke(auditActorOf(req), personOf(req).subject, id);
  }

  @Get('people/:subject/tokens')
  @Requires('people:read')
  async ofPerson(@Param('subject') subject: string) {
    return { object: 'list', data: await this.tokens.list(subject) };
  }

  @Delete('people/:subject/tokens/:id')
  @Requires('people:write')
  revoke(@Param('subject') subject: string, @Param('id') id: string, @Req() req: Request) {
    return this.tokens.revoke(auditActorOf(req), subject, id);
  }
}
