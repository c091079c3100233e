import { Body, Controller, Delete, Get, HttpCode, Param, Post, Req } from '@nestjs/common';
import type { Request } from 'express';
import { Requires } from '../access/requires.decorator';
import { AdminOnly } from '../auth/route-access.decorators';
import { GatewayValidationPipe } from '../common/validation/validation.pipe';
import { CreateTokenDto, RotateTokenDto } from './admin.dto';
import { auditActorOf } from './audit-actor';
import { OwnTeamTokensService } from './own-team-tokens.service';
import { personOf } from './person-of';
import { tokenSpecOf } from './token-spec';

const strict = new GatewayValidationPipe({ strict: true });
const WHAT = 'Team tokens of your own';

/**
 * A person's own tokens of a team (`/me/teams/{team}/tokens`): `tokens:own`, which a team-member holds only where
 * the team allows it (selfServiceTokens, access/permissions.ts). Each route acts on the caller's own tokens alone.
 */
@AdminOnly()
@Controller('admin/v1/me/teams/:team/tokens')
export class OwnTeamTokensController {
  constructor(private readonly tokens: OwnTeamTokensService) {}

  /** 201 with the token itself: the only response that ever contains it. */
  @Post()
  @Requires('tokens:own', { team: 'team' })
  @HttpCode(201)
  issue(@Param('team') team: string, @Body(strict) body: CreateTokenDto, @Req() req: Request) {
    return this.tokens.issue(auditActorOf(req), team, personOf(req, WHAT), tokenSpecOf(body));
  }

  @Get()
  @Requires('tokens:own', { team: 'team' })
  async list(@Param('team') team: string, @Req() req: Request) {
    return { object: 'list', data: await this.tokens.list(team, personOf(req, WHAT).subject) };
  }

  @Delete(':id')
  @Requires('tokens:own', { team: 'team' })
  revoke(@Param('team') team: string, @Param('id') id: string, @Req() req: Request) {
    return this.tokens.revoke(auditActorOf(req), team, personOf(req, WHAT).subject, id);
  }

  /** A new secret for the same token id; the response carries it, once. */
  @Post(':id/rotate')
  @Requires('tokens:own', { team: 'team' })
  @HttpCode(200)
  rotate(
    @Param('team') team: string,
    @Param('id') id: string,
    @Body(strict) body: RotateTokenDto,
    @Req() req: Request,
  ) {
    const subject = personOf(req, WHAT).subject;
    return this.tokens.rotate(auditActorOf(req), team, subject, id, body.gracePeriodSeconds ?? 0);
  }
}
