import { randomUUID } from 'node:crypto';
import { Injectable, type CallHandler, type ExecutionContext, type NestInterceptor } from '@nestjs/common';
import type { Request, Response } from 'express';
import { finalize, type Observable } from 'rxjs';
import type { RequestContext } from '../common/http/request-context';
import { LimitsService } from '../limits/limits.service';
import { MetricsService, type RequestTimings } from '../metrics/metrics.service';
import type { UsageOutcome, UsageRecord } from './usage-record';
import { UsageWriter } from './usage-writer';

/**
 * Makes every authenticated request to a billable route produce exactly one usage
 * record, however it ends: completed, refused by validation or a limit, failed
 * upstream, or abandoned by the client. It accounts once both the response has
 * closed (which happens once in all those cases) and the handler has settled (a
 * client can leave before the handler has counted what it relayed), so no code path
 * can forget to account. (Interceptors run after the guard and before the validation pipe.)
 */
@Injectable()
export class UsageRecorder implements NestInterceptor {
  constructor(
    private readonly writer: UsageWriter,
    private readonly limits: LimitsService,
    private readonly metrics: MetricsService,
  ) {}

  intercept(context: ExecutionContext, next: CallHandler): Observable<unknown> {
    const req = context.switchToHttp().getRequest<Request>();
    const res = context.switchToHttp().getResponse<Response>();
    if (!req.ctx.principal) return next.handle();
    let waitingFor = 2;
    const settle = () => {
      if (--waitingFor === 0) this.account(req, res);
    };
    res.once('close', settle);
    return next.handle().pipe(finalize(settle));
  }

  private account(req: Request, res: Response): void {
    const ctx = req.ctx;
    const principal = ctx.principal!;
    const tokens = ctx.tokens ?? { prompt: 0, completion: 0, reasoning: 0, estimated: false };
    const record: UsageRecord = {
      id: randomUUID(),
      at: new Date().toISOString(),
      requestId: ctx.requestId,
      team: principal.teamId,
      tokenId: principal.tokenId,
      // Only routed (configured) model names are counted, so clients cannot grow the counters with junk names.
      model: ctx.model ?? '-',
      backend: ctx.backend ?? '',
      upstreamModel: ctx.upstreamModel ?? '',
      stream: ctx.stream === true,
      promptTokens: tokens.prompt,
      completionTokens: tokens.completion,
      reasoningTokens: tokens.reasoning,
      status: res.statusCode,
      outcome: outcomeOf(req, res),
      errorCode: ctx.errorCode ?? '',
      latencyMs: Math.round(Number(process.hrtime.bigint() - ctx.startedAt) / 1e4) / 100,
      estimated: tokens.estimated,
    };
    this.writer.enqueue({ record, settle: this.limits.settlement(ctx.reservation, tokens.prompt + tokens.completion) });
    this.metrics.observeRequest(record, timingsOf(ctx));
    if (ctx.upstreamErrorReason && !ctx.aborted) this.metrics.upstreamErrors.inc({ backend: record.backend, reason: ctx.upstreamErrorReason });
  }
}

function seconds(from: bigint, to: bigint): number {
  return Number(to - from) / 1e9;
}

function timingsOf(ctx: RequestContext): RequestTimings {
  const now = process.hrtime.bigint();
  return {
    total: seconds(ctx.startedAt, now),
    upstream: ctx.upstreamStartedAt !== undefined ? seconds(ctx.upstreamStartedAt, ctx.upstreamEndedAt ?? now) : undefined,
    firstToken: ctx.firstTokenAt !== undefined ? seconds(ctx.startedAt, ctx.firstTokenAt) : undefined,
  };
}

function outcomeOf(req: Request, res: Response): UsageOutcome {
  if (req.ctx.aborted || !res.writableFinished) return 'aborted';
  if (req.ctx.limitRejected) return 'rejected';
  if (res.statusCode >= 400 || req.ctx.errorCode) return 'error';
  return 'ok';
}
