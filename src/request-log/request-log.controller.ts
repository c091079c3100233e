import { Controller, Get, Inject, Param, Query, Req } from '@nestjs/common';
import type { Request } from 'express';
import { visibleTeams } from '../access/admin-access';
import { Requires } from '../access/requires.decorator';
import { AdminOnly } from '../auth/route-access.decorators';
import { GatewayConfig } from '../config/config.schema';
import { GatewayException } from '../core/errors/gateway.exception';
import { GatewayValidationPipe } from '../common/validation/validation.pipe';
import type { RequestLogContent, RequestLogEntry } from './request-log-entry';
import { InvalidCursorError } from './request-log-query';
import { REQUEST_LOG_STORE, type RequestLogQuery, type RequestLogStore } from './request-log.repository';
import { RequestLogQueryDto } from './request-log.dto';

const strict = new GatewayValidationPipe({ strict: true });
const DEFAULT_LIMIT = 50;

/** Reads the log for the two controllers: the query as the store takes it, and entries as the API shows them. */
abstract class RequestLogReader {
  constructor(
    protected readonly store: RequestLogStore,
    private readonly config: GatewayConfig,
  ) {}

  protected async page(dto: RequestLogQueryDto, scope: Pick<RequestLogQuery, 'team' | 'teams'>) {
    const query: RequestLogQuery = {
      model: dto.model,
      status: dto.status,
      endpoint: dto.endpoint,
      outcome: dto.outcome,
      from: dto.from,
      to: dto.to,
      traceId: dto.traceId,
      limit: dto.limit ?? DEFAULT_LIMIT,
      after: dto.after,
      ...scope,
    };
    try {
      const { entries, next } = await this.store.query(query);
      return { object: 'list', currency: this.config.billing.currency, data: entries.map(view), next };
    } catch (error) {
      if (error instanceof InvalidCursorError)
        throw new GatewayException('invalid_request', 'after: must be the next cursor of a page', {
          param: 'after',
          wireCode: null,
        });
      throw unavailable(error);
    }
  }

  protected async one(id: string, visible: (team: string) => boolean) {
    const found = await this.store.get(id).catch((error: unknown) => {
      throw unavailable(error);
    });
    if (!found || !visible(found.entry.team)) throw notFound(id);
    return {
      ...view(found.entry),
      currency: this.config.billing.currency,
      content: found.content satisfies RequestLogContent | null,
    };
  }
}

/**
 * GET /admin/v1/requests: any team's entries, or every team's the caller may read (a team-admin or team-member:
 * their teams' only, without `team=`; another team's with it is 403). GET /admin/v1/requests/{id}: one entry with
 * its content when kept (404 for an entry of a team the caller may not read, as for one that does not exist).
 */
@AdminOnly()
@Controller('admin/v1/requests')
export class AdminRequestLogController extends RequestLogReader {
  constructor(@Inject(REQUEST_LOG_STORE) store: RequestLogStore, config: GatewayConfig) {
    super(store, config);
  }

  @Get()
  @Requires('requests:read', { teamQuery: 'team' })
  async list(@Query(strict) dto: RequestLogQueryDto, @Req() req: Request) {
    const visible = visibleTeams(req, 'requests:read');
    if (dto.team !== undefined || visible === 'all') return this.page(dto, { team: dto.team });
    return this.page(dto, { teams: visible });
  }

  @Get(':id')
  @Requires('requests:read')
  async get(@Param('id') id: string, @Req() req: Request) {
    const visible = visibleTeams(req, 'requests:read');
    return this.one(id, (team) => visible === 'all' || visible.includes(team));
  }
}

/** GET /v1/requests and /v1/requests/{id}: a team reads its own entries with its own token. */
@Controller('v1/requests')
export class TeamRequestLogController extends RequestLogReader {
  constructor(@Inject(REQUEST_LOG_STORE) store: RequestLogStore, config: GatewayConfig) {
    super(store, config);
  }

  @Get()
  async list(@Query(strict) dto: RequestLogQueryDto, @Req() req: Request) {
    const team = req.exchange.caller.teamId;
    if (dto.team !== undefined && dto.team !== team)
      throw new GatewayException('permission_denied', "A team token can only read its own team's requests.", {
        param: 'team',
      });
    return this.page(dto, { team });
  }

  @Get(':id')
  async get(@Param('id') id: string, @Req() req: Request) {
    const team = req.exchange.caller.teamId;
    return this.one(id, (entryTeam) => entryTeam === team);
  }
}

/** An entry as the API shows it: its cost in the billing currency beside the nano-units. */
function view(entry: RequestLogEntry) {
  return { object: 'request', ...entry, cost: entry.costNanos === null ? null : entry.costNanos / 1e9 };
}

function notFound(id: string): GatewayException {
  return new GatewayException(
    'not_found',
    `No request ${JSON.stringify(id.slice(0, 64))} in the request log.`,
    {
      wireCode: null,
    },
  );
}

function unavailable(error: unknown): GatewayException {
  return new GatewayException(
    'store_unavailable',
    "The request log's store is unreachable; try again shortly.",
    {
      cause: error,
    },
  );
}
