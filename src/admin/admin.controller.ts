import { Body, Controller, Delete, Get, HttpCode, Param, Patch, Post, Query, Req } from '@nestjs/common';
import type { Request } from 'express';
import { visibleTeams } from '../access/admin-access';
import { grantsOn } from '../access/permissions';
import { Requires } from '../access/requires.decorator';
import { AuditLog } from '../audit/audit.log';
import { AdminOnly } from '../auth/route-access.decorators';
import { GatewayValidationPipe } from '../common/validation/validation.pipe';
import { AccessAdminService } from './access-admin.service';
import { auditActorOf as actorOf } from './audit-actor';
import { assertWithinTeamAdminBound } from './team-admin-changes';
import { tokenSpecOf } from './token-spec';
import { BudgetReport } from '../limits/budget-report';
import { PriceBook } from '../billing/price-book';
import { GatewayException } from '../core/errors/gateway.exception';
import {
  AuditQueryDto,
  CreateTeamDto,
  CreateTokenDto,
  DeleteTeamQueryDto,
  RotateTokenDto,
  TeamListQueryDto,
  UpdateTeamDto,
} from './admin.dto';

const strict = new GatewayValidationPipe({ strict: true });

/**
 * The admin API: teams, tokens and the audit trail. Every route needs the admin key or a console session, and
 * the permission its @Requires names (access/permissions.ts); lists show only the teams the caller may see.
 */
@AdminOnly()
@Controller('admin/v1')
export class AdminController {
  constructor(
    private readonly admin: AccessAdminService,
    private readonly audit: AuditLog,
    private readonly budgets: BudgetReport,
    private readonly prices: PriceBook,
  ) {}

  @Post('teams')
  @Requires('teams:create')
  @HttpCode(201)
  async createTeam(@Body(strict) body: CreateTeamDto, @Req() req: Request) {
    const { id, ...changes } = body;
    return teamView(await this.admin.createTeam(actorOf(req), id, changes));
  }

  /** Every team, or with `limit` a page of them (`after` the last id seen, `search` within ids). */
  @Get('teams')
  @Requires('teams:read')
  async listTeams(@Query(strict) query: TeamListQueryDto, @Req() req: Request) {
    const visible = visibleTeams(req, 'teams:read');
    if (visible !== 'all') {
      // A team-admin's few teams: read by id, then paged like the full list.
      const teams = (await Promise.all(visible.map((id) => this.admin.teams.get(id)))).filter(
        (t) => t !== null,
      );
      const after = teams.filter(
        (t) =>
          (query.after === undefined || t.id > query.after) &&
          t.id.includes((query.search ?? '').toLowerCase()),
      );
      const page = after.slice(0, query.limit ?? after.length);
      return { object: 'list', data: page.map(teamView), has_more: page.length < after.length };
    }
    if (query.limit === undefined && query.after === undefined && query.search === undefined) {
      return { object: 'list', data: (await this.admin.teams.list()).map(teamView), has_more: false };
    }
    const { teams, hasMore } = await this.admin.teams.page({
      limit: query.limit ?? 100,
      after: query.after,
      search: query.search,
    });
    return { object: 'list', data: teams.map(teamView), has_more: hasMore };
  }

  @Get('teams/:team')
  @Requires('teams:read', { team: 'team' })
  async getTeam(@Param('team') teamId: string) {
    return teamView(await this.admin.teams.require(teamId));
  }

  /** The team's budgets and how much of each is spent in its current window. */
  @Get('teams/:team/budget')
  @Requires('spend:read', { team: 'team' })
  async getBudget(@Param('team') teamId: string) {
    return this.budgets.of(teamId);
  }

  @Patch('teams/:team')
  @Requires('teams:adjust', { team: 'team' })
  async updateTeam(@Param('team') teamId: string, @Body(strict) body: UpdateTeamDto, @Req() req: Request) {
    // Without teams:write (a team-admin), the change is checked against the team as the store reads it.
    const orgAdmin = grantsOn(req.adminActor?.roles ?? [], 'teams:write', teamId);
    const check = orgAdmin ? undefined : assertWithinTeamAdminBound;
    return teamView(await this.admin.updateTeam(actorOf(req), teamId, body, check));
  }

  @Post('teams/:team/disable')
  @Requires('teams:write', { team: 'team' })
  @HttpCode(200)
  async disableTeam(@Param('team') teamId: string, @Req() req: Request) {
    return teamView(await this.admin.updateTeam(actorOf(req), teamId, { disabled: true }));
  }

  @Post('teams/:team/enable')
  @Requires('teams:write', { team: 'team' })
  @HttpCode(200)
  async enableTeam(@Param('team') teamId: string, @Req() req: Request) {
    return teamView(await this.admin.updateTeam(actorOf(req), teamId, { disabled: false }));
  }

  @Delete('teams/:team')
  @Requires('teams:write', { team: 'team' })
  async deleteTeam(
    @Param('team') teamId: string,
    @Query(strict) query: DeleteTeamQueryDto,
    @Req() req: Request,
  ) {
    return this.admin.deleteTeam(actorOf(req), teamId, query.force === 'true');
  }

  /** 201 with the token itself: the only response that ever contains it. */
  @Post('teams/:team/tokens')
  @Requires('tokens:write', { team: 'team' })
  @HttpCode(201)
  async createToken(@Param('team') teamId: string, @Body(strict) body: CreateTokenDto, @Req() req: Request) {
    return this.admin.createToken(actorOf(req), teamId, tokenSpecOf(body));
  }

  @Get('teams/:team/tokens')
  @Requires('tokens:read', { team: 'team' })
  async listTokens(@Param('team') teamId: string) {
    await this.admin.teams.require(teamId);
    return { object: 'list', data: await this.admin.tokens.list(teamId) };
  }

  @Get('tokens/:id')
  @Requires('tokens:read', { token: 'id' })
  async getToken(@Param('id') tokenId: string) {
    return this.admin.tokens.require(tokenId);
  }

  @Delete('tokens/:id')
  @Requires('tokens:write', { token: 'id' })
  async revokeToken(@Param('id') tokenId: string, @Req() req: Request) {
    return this.admin.revokeToken(actorOf(req), tokenId);
  }

  /** A new secret for the same token id; the response carries it, once. */
  @Post('tokens/:id/rotate')
  @Requires('tokens:write', { token: 'id' })
  @HttpCode(200)
  async rotateToken(@Param('id') tokenId: string, @Body(strict) body: RotateTokenDto, @Req() req: Request) {
    return this.admin.rotateToken(actorOf(req), tokenId, body.gracePeriodSeconds ?? 0);
  }

  /** What a model costs on each of its deployments, and where each figure came from (config, price data, table). */
  @Get('prices/:model')
  @Requires('prices:read')
  getPrices(@Param('model') model: string) {
    const prices = this.prices.explainModel(model);
    if (!prices) throw new GatewayException('model_not_found', `The model "${model}" is not configured.`);
    return prices;
  }

  @Get('audit')
  @Requires('audit:read')
  async readAudit(@Query(strict) query: AuditQueryDto, @Req() req: Request) {
    const visible = visibleTeams(req, 'audit:read');
    const data = await this.audit.read({
      ...(visible === 'all' ? {} : { teams: visible }),
      limit: query.limit ?? 100,
      before: query.before,
      action: query.action,
      target: query.target,
    });
    return { object: 'list', data, has_more: data.length === (query.limit ?? 100) };
  }
}

function teamView<T extends object>(team: T): T & { object: 'team' } {
  return { object: 'team', ...team };
}
