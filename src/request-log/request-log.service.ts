import { Injectable } from '@nestjs/common';
import type { Request } from 'express';
import { GatewayConfig } from '../config/config.schema';
import type { Exchange } from '../gateway/exchange';
import { clientAddress } from '../common/http/client-address';
import type { UsageRecord } from '../usage/usage-record';
import { RequestLogRedactor } from './request-log-redactor';
import type { LoggedAttempt, RequestLogEntry } from './request-log-entry';
import { RequestLogWriter } from './request-log-writer';

/** A W3C traceparent: version, trace id, parent id, flags; the trace id must not be all zeros. */
const TRACEPARENT = /^[0-9a-f]{2}-([0-9a-f]{32})-[0-9a-f]{16}-[0-9a-f]{2}$/;

/**
 * Turns each finished model request into its request log entry (docs/request-log.md) and hands it to the writer.
 * Called once per request, by the usage recorder, with the request's usage record: the entry says what the record
 * says (tokens, cost, status, outcome) plus who, where, every attempt and the timings. Content (the request body
 * and the answer) goes with it only when the caller's team keeps content; it is redacted by the writer.
 */
@Injectable()
export class RequestLog {
  private readonly enabled: boolean;

  constructor(
    private readonly writer: RequestLogWriter,
    private readonly redactor: RequestLogRedactor,
    config: GatewayConfig,
  ) {
    this.enabled = config.logging.requests.enabled;
  }

  note(exchange: Exchange, record: UsageRecord, req: Request): void {
    if (!this.enabled) return;
    const principal = exchange.principal;
    if (!principal) return;
    const ended = process.hrtime.bigint();
    const msSinceStart = (at: bigint | undefined) =>
      at === undefined ? null : Math.round(Number(at - exchange.startedAt) / 1e4) / 100;
    const latencyMs = msSinceStart(ended)!;
    const entry: RequestLogEntry = {
      id: record.id,
      requestId: record.requestId,
      at: new Date(Date.now() - latencyMs).toISOString(),
      team: record.team,
      token: { id: principal.tokenId, name: principal.tokenName ?? null },
      person: principal.owner ?? null,
      endpoint: record.endpoint,
      stream: record.stream,
      model: record.model,
      servedModel: exchange.servedModel ?? '',
      deployment: record.backend ? `${record.backend}/${record.upstreamModel}` : null,
      attempts: exchange.attemptsMade.map((attempt) => this.logged(attempt)),
      status: record.status,
      outcome: record.outcome,
      errorCode: record.errorCode || null,
      latencyMs,
      ttfbMs: msSinceStart(exchange.firstTokenAt ?? exchange.upstreamEndedAt),
      usage: {
        prompt: record.promptTokens,
        completion: record.completionTokens,
        reasoning: record.reasoningTokens,
        cached: record.cachedTokens,
        cacheWrite: record.cacheWriteTokens,
        cacheWrite1h: record.cacheWrite1hTokens,
        estimated: record.estimated,
      },
      costNanos: record.costNanos,
      traceId: exchange.trace?.traceId ?? traceIdOf(req.headers.traceparent),
      clientAddress: clientAddress(req) ?? null,
      contentKept: principal.keepsContent === true,
      cacheHit: record.cacheHit,
    };
    this.writer.enqueue(
      entry.contentKept ? { entry, content: { request: req.body, response: exchange.answer } } : { entry },
    );
  }

  /** An attempt as the log shows it: an error message may quote the vendor, who may quote the prompt. */
  private logged(attempt: Exchange['attemptsMade'][number]): LoggedAttempt {
    if (attempt.kind === 'skipped') return attempt;
    return { ...attempt, error: attempt.error === null ? null : this.redactor.redactText(attempt.error) };
  }
}

/** The trace id of a valid `traceparent` header, else null. */
export function traceIdOf(header: string | string[] | undefined): string | null {
  if (typeof header !== 'string') return null;
  const traceId = TRACEPARENT.exec(header.trim())?.[1];
  return traceId && !/^0+$/.test(traceId) ? traceId : null;
}
