import { Body, Controller, Delete, Get, HttpCode, Param, Post } from '@nestjs/common';
import { AdminOnly } from '../auth/route-access.decorators';
import { TokenStore } from '../auth/token.store';
import { TeamStore } from '../teams/team.store';
import { CreateTeamDto, CreateTokenDto } from './admin.dto';

/** The admin API: teams and their tokens. Every route needs `Authorization: Bearer <admin.apiKey>`. */
@AdminOnly()
@Controller('admin/v1')
export class AdminController {
  constructor(
    private readonly teams: TeamStore,
    private readonly tokens: TokenStore,
  ) {}

  @Post('teams')
  @HttpCode(201)
  async createTeam(@Body() body: CreateTeamDto) {
    return { object: 'team', ...(await this.teams.create(body.id, body.models ?? ['*'])) };
  }

  @Get('teams')
  async listTeams() {
    return { object: 'list', data: (await this.teams.list()).map((team) => ({ object: 'team', ...team })) };
  }

  @Get('teams/:team')
  async getTeam(@Param('team') teamId: string) {
    return { object: 'team', ...(await this.teams.require(teamId)) };
  }

  /** 201 with the token itself: the only response that ever contains it. */
  @Post('teams/:team/tokens')
  @HttpCode(201)
  async createToken(@Param('team') teamId: string, @Body() body: CreateTokenDto) {
    return this.tokens.create(teamId, body.name);
  }

  @Get('teams/:team/tokens')
  async listTokens(@Param('team') teamId: string) {
    return { object: 'list', data: await this.tokens.list(teamId) };
  }

  @Delete('tokens/:id')
  async revokeToken(@Param('id') tokenId: string) {
    return this.tokens.revoke(tokenId);
  }
}
