import { Controller, Get, Query, Req } from '@nestjs/common';
import type { Request } from 'express';
import { visibleTeams } from '../access/admin-access';
import { Requires } from '../access/requires.decorator';
import { AdminOnly } from '../auth/route-access.decorators';
import { GatewayException } from '../core/errors/gateway.exception';
import { GatewayValidationPipe } from '../common/validation/validation.pipe';
import { UsageQueryService, type UsageQuery } from './usage-query.service';
import { UsageQueryDto, UsageRecordsQueryDto } from './usage.dto';

const strict = new GatewayValidationPipe({ strict: true });

function toQuery(dto: UsageQueryDto): UsageQuery {
  const to = dto.to ?? new Date().toISOString().slice(0, 10);
  const from =
    dto.from ?? new Date(Date.parse(`${to}T00:00:00Z`) - 29 * 86_400_000).toISOString().slice(0, 10);
  return { team: dto.team, model: dto.model, from, to, groupBy: dto.groupBy ?? 'day' };
}

async function summaryView(usage: UsageQueryService, query: UsageQuery) {
  const { data, total } = await usage.summary(query);
  return {
    object: 'usage',
    from: query.from,
    to: query.to,
    group_by: query.groupBy,
    team: query.team ?? null,
    model: query.model ?? null,
    currency: usage.currency,
    data,
    total,
  };
}

/**
 * GET /admin/v1/usage: any team's counters, or every team's the caller may read (a team-admin or team-member:
 * their teams' only, without `team=`; another team's with it is 403).
 */
@AdminOnly()
@Controller('admin/v1/usage')
export class AdminUsageController {
  constructor(private readonly usage: UsageQueryService) {}

  @Get()
  @Requires('usage:read', { teamQuery: 'team' })
  async summary(@Query(strict) dto: UsageQueryDto, @Req() req: Request) {
    const visible = visibleTeams(req, 'usage:read');
    return summaryView(this.usage, { ...toQuery(dto), ...(visible === 'all' ? {} : { within: visible }) });
  }

  @Get('records')
  @Requires('usage:read', { teamQuery: 'team' })
  async records(@Query(strict) dto: UsageRecordsQueryDto) {
    return { object: 'list', data: await this.usage.records(dto.team, dto.limit ?? 100, dto.before) };
  }
}

/** GET /v1/usage: a team reads its own counters with its own token. */
@Controller('v1/usage')
export class TeamUsageController {
  constructor(private readonly usage: UsageQueryService) {}

  @Get()
  async summary(@Query(strict) dto: UsageQueryDto, @Req() req: Request) {
    const team = req.exchange.caller.teamId;
    if (dto.team !== undefined && dto.team !== team) {
      throw new GatewayException('permission_denied', "A team token can only read its own team's usage.", {
        param: 'team',
      });
    }
    return summaryView(this.usage, { ...toQuery(dto), team });
  }
}
