import { randomUUID } from 'node:crypto';
import { Injectable, type NestMiddleware } from '@nestjs/common';
import type { NextFunction, Request, Response } from 'express';
import type { Principal } from '../auth/principal';
import type { Exchange } from '../gateway/exchange';
import { LimitsService } from '../limits/limits.service';
import { MetricsService, type RequestTimings } from '../metrics/metrics.service';
import { modelNames, withCost, type UsageOutcome, type UsageRecord } from './usage-record';
import { GatewayConfig } from '../config/config.schema';
import { PriceBook } from '../billing/price-book';
import { InflightLeases } from './inflight-leases';
import { UsageWriter, type WriteResult } from './usage-writer';
import { RequestLog } from '../request-log/request-log.service';
import { Tracing } from '../telemetry/tracing';

/**
 * Makes every authenticated request to a billable route produce exactly one usage
 * record, however it ends: completed, refused by validation or a limit, failed
 * upstream, or abandoned by the client. It accounts once the response has closed
 * (which happens once in all those cases) and the handler, if it ran, has settled (a
 * client can leave before the handler has counted what it relayed), so no code path
 * can forget to account.
 *
 * It is a middleware plus the pipeline's `exchange.holdUsage` rather than a Nest interceptor:
 * any interceptor puts rxjs and two AsyncResource.bind calls on every request (about 7%
 * of a request's CPU in bench/profile.mjs).
 */
@Injectable()
export class UsageRecorder implements NestMiddleware {
  constructor(
    private readonly writer: UsageWriter,
    private readonly limits: LimitsService,
    private readonly metrics: MetricsService,
    private readonly leases: InflightLeases,
    private readonly prices: PriceBook,
    private readonly config: GatewayConfig,
    private readonly requestLog: RequestLog,
    private readonly tracing: Tracing,
  ) {}

  /** Runs before the guard, so a request that fails authentication simply has no principal to bill. */
  use(req: Request, res: Response, next: NextFunction): void {
    // The request's server span starts here and ends with its record: tracing off, this check is all it costs.
    if (this.tracing.enabled) req.exchange.traced(this.tracing.start(req));
    const latch = { waitingFor: 1 };
    const release = () => {
      if (--latch.waitingFor > 0) return;
      const caller = req.exchange.principal;
      if (caller) this.account(req.exchange, caller, req, res);
      req.exchange.trace?.end(res.statusCode);
    };
    req.exchange.holdUsageWith((work) => {
      latch.waitingFor++;
      work.then(release, release);
    });
    res.on('close', release); // emitted once per response (`on`: no once-wrapper held per stream)
    next();
  }

  private observeWhenWritten(record: UsageRecord, timings: RequestTimings, result: WriteResult): void {
    if (result === 'replaced-estimate' || result === 'replaced-counted-estimate') {
      this.metrics.estimatesReplaced.inc({ metrics: result === 'replaced-estimate' ? 'real' : 'estimate' });
    }
    if (countsInMetrics(result)) this.metrics.observeRequest(record, timings);
  }

  /** The finished exchange's one usage record (the body names the model asked for when unrouted), and its log entry. */
  private account(ctx: Exchange, principal: Principal, req: Request, res: Response): void {
    const body: unknown = req.body;
    const tokens = ctx.tokens ?? { prompt: 0, completion: 0, reasoning: 0, estimated: false };
    const served = {
      model: ctx.servedModel ?? ctx.model ?? '',
      backend: ctx.backend ?? '',
      upstreamModel: ctx.upstreamModel ?? '',
    };
    const record: UsageRecord = withCost(
      {
        id: ctx.recordId ?? randomUUID(),
        at: new Date().toISOString(),
        requestId: ctx.requestId,
        team: principal.teamId,
        tokenId: principal.tokenId,
        // Counted under the model asked for even when refused before routing; only configured names become
        // counter fields and metric labels, so clients cannot grow them with junk names.
        ...modelNames(ctx.model, body, (name) => Object.hasOwn(this.config.models, name)),
        backend: ctx.backend ?? '',
        upstreamModel: ctx.upstreamModel ?? '',
        servedModel: ctx.servedModel ?? ctx.model ?? '',
        attempts: ctx.attempts ?? (ctx.upstreamStartedAt !== undefined ? 1 : 0),
        endpoint: ctx.endpoint ?? 'chat.completions',
        stream: ctx.stream === true,
        promptTokens: tokens.prompt,
        completionTokens: tokens.completion,
        reasoningTokens: tokens.reasoning,
        status: res.statusCode,
        outcome: outcomeOf(ctx, res),
        errorCode: ctx.errorCode ?? '',
        latencyMs: Math.round(Number(process.hrtime.bigint() - ctx.startedAt) / 1e4) / 100,
        estimated: tokens.estimated,
        cachedTokens: tokens.cached ?? 0,
        cacheWriteTokens: tokens.cacheWrite ?? 0,
        cacheWrite1hTokens: tokens.cacheWrite1h ?? 0,
        cacheHit: ctx.cacheHit,
      },
      this.prices.priceOf(served),
    );
    const lease = this.leases.end(record.id);
    const timings = timingsOf(ctx);
    // A survivor may have recorded this request as lost while this replica's heartbeat lapsed (a pause, a cut-off):
    // then the metrics wait for the usage script to say whether the estimate was already counted (inflight-leases.ts).
    const mayReplace = lease !== undefined && this.leases.mayHaveBeenSwept(lease.admittedAt);
    this.writer.enqueue({
      record,
      // A response cache hit counts as a request against limits, not as tokens: nothing was generated for it.
      settle: this.limits.settlement(
        ctx.reservation,
        ctx.cacheHit ? 0 : tokens.prompt + tokens.completion,
        record.costNanos,
      ),
      concurrencyKeys: ctx.concurrencyKeys ?? [],
      admittedAt: lease?.admittedAt,
      onWritten: mayReplace ? (result) => this.observeWhenWritten(record, timings, result) : undefined,
    });
    if (!mayReplace) this.metrics.observeRequest(record, timings);
    this.requestLog.note(ctx, record, req);
    if (ctx.upstreamErrorReason && !ctx.aborted)
      this.metrics.upstreamErrors.inc({ backend: record.backend, reason: ctx.upstreamErrorReason });
  }
}

/** A record whose metrics waited for its write: counted unless its request was counted already, as an estimate. */
function countsInMetrics(result: WriteResult): boolean {
  return result !== 'duplicate' && result !== 'replaced-counted-estimate';
}

function seconds(from: bigint, to: bigint): number {
  return Number(to - from) / 1e9;
}

function timingsOf(ctx: Exchange): RequestTimings {
  const now = process.hrtime.bigint();
  return {
    total: seconds(ctx.startedAt, now),
    upstream:
      ctx.upstreamStartedAt !== undefined
        ? seconds(ctx.upstreamStartedAt, ctx.upstreamEndedAt ?? now)
        : undefined,
    firstToken: ctx.firstTokenAt !== undefined ? seconds(ctx.startedAt, ctx.firstTokenAt) : undefined,
  };
}

function outcomeOf(exchange: Exchange, res: Response): UsageOutcome {
  if (exchange.aborted || !res.writableFinished) return 'aborted';
  if (exchange.limitRejected) return 'rejected';
  if (res.statusCode >= 400 || exchange.errorCode) return 'error';
  return 'ok';
}
