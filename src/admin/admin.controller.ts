import { Body, Controller, Delete, Get, HttpCode, Param, Patch, Post, Query, Req } from '@nestjs/common';
import type { Request } from 'express';
import { AuditLog, type Actor } from '../audit/audit.log';
import { AdminOnly } from '../auth/route-access.decorators';
import { GatewayValidationPipe } from '../common/validation/validation.pipe';
import { AccessAdminService } from './access-admin.service';
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

/** The admin API: teams, tokens and the audit trail. Every route needs `Authorization: Bearer <admin.apiKey>`. */
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
  @HttpCode(201)
  async createTeam(@Body(strict) body: CreateTeamDto, @Req() req: Request) {
    const { id, ...changes } = body;
    return teamView(await this.admin.createTeam(actorOf(req), id, { models: ['*'], ...changes }));
  }

  /** Every team, or with `limit` a page of them (`after` the last id seen, `search` within ids). */
  @Get('teams')
  async listTeams(@Query(strict) query: TeamListQueryDto) {
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
  async getTeam(@Param('team') teamId: string) {
    return teamView(await this.admin.teams.require(teamId));
  }

  /** The team's budgets and how much of each is spent in its current window. */
  @Get('teams/:team/budget')
  async getBudget(@Param('team') teamId: string) {
    return this.budgets.of(teamId);
  }

  @Patch('teams/:team')
  async updateTeam(@Param('team') teamId: string, @Body(strict) body: UpdateTeamDto, @Req() req: Request) {
    return teamView(await this.admin.updateTeam(actorOf(req), teamId, body));
  }

  @Post('teams/:team/disable')
  @HttpCode(200)
  async disableTeam(@Param('team') teamId: string, @Req() req: Request) {
    return teamView(await this.admin.updateTeam(actorOf(req), teamId, { disabled: true }));
  }

  @Post('teams/:team/enable')
  @HttpCode(200)
  async enableTeam(@Param('team') teamId: string, @Req() req: Request) {
    return teamView(await this.admin.updateTeam(actorOf(req), teamId, { disabled: false }));
  }

  @Delete('teams/:team')
  async deleteTeam(
    @Param('team') teamId: string,
    @Query(strict) query: DeleteTeamQueryDto,
    @Req() req: Request,
  ) {
    return this.admin.deleteTeam(actorOf(req), teamId, query.force === 'true');
  }

  /** 201 with the token itself: the only response that ever contains it. */
  @Post('teams/:team/tokens')
  @HttpCode(201)
  async createToken(@Param('team') teamId: string, @Body(strict) body: CreateTokenDto, @Req() req: Request) {
    const expiresAt = body.expiresAt
      ? new Date(body.expiresAt)
      : body.expiresInSeconds
        ? new Date(Date.now() + body.expiresInSeconds * 1000)
        : undefined;
    return this.admin.createToken(actorOf(req), teamId, {
      name: body.name,
      expiresAt,
      models: body.models,
      limits: body.limits,
    });
  }

  @Get('teams/:team/tokens')
  async listTokens(@Param('team') teamId: string) {
    await this.admin.teams.require(teamId);
    return { object: 'list', data: await this.admin.tokens.list(teamId) };
  }

  @Get('tokens/:id')
  async getToken(@Param('id') tokenId: string) {
    return this.admin.tokens.require(tokenId);
  }

  @Delete('tokens/:id')
  async revokeToken(@Param('id') tokenId: string, @Req() req: Request) {
    return this.admin.revokeToken(actorOf(req), tokenId);
  }

  /** A new secret for the same token id; the response carries it, once. */
  @Post('tokens/:id/rotate')
  @HttpCode(200)
  async rotateToken(@Param('id') tokenId: string, @Body(strict) body: RotateTokenDto, @Req() req: Request) {
    return this.admin.rotateToken(actorOf(req), tokenId, body.gracePeriodSeconds ?? 0);
  }

  /** What a model costs on each of its deployments, and where each figure came from (config, price data, table). */
  @Get('prices/:model')
  getPrices(@Param('model') model: string) {
    const prices = this.prices.explainModel(model);
    if (!prices) throw new GatewayException('model_not_found', `The model "${model}" is not configured.`);
    return prices;
  }

  @Get('audit')
  async readAudit(@Query(strict) query: AuditQueryDto) {
    const data = await this.audit.read({
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

/**
 * The admin key is shared, so the audit trail records the caller's address and, when
 * sent, the name in `X-Switchyard-Actor` (an operator's own label, not a credential). From the console, the
 * name given at sign-in.
 */
function actorOf(req: Request): Actor {
  if (req.consoleActor)
    return { actor: `console:${req.consoleActor}`, ip: req.ip, requestId: req.exchange.requestId };
  const named = req.headers['x-switchyard-actor'];
  const label = typeof named === 'string' ? named.replace(/[^\w.@:-]/g, '').slice(0, 64) : '';
  return { actor: label ? `admin-api:${label}` : 'admin-api', ip: req.ip, requestId: req.exchange.requestId };
}
