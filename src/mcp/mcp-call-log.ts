import { randomUUID } from 'node:crypto';
import { Injectable } from '@nestjs/common';
import type { Request } from 'express';
import type { Principal } from '../auth/principal';
import { clientAddress } from '../common/http/client-address';
import { GatewayConfig } from '../config/config.schema';
import type { UsageOutcome } from '../core/request-outcome';
import { MetricsService } from '../metrics/metrics.service';
import { traceIdOf } from '../request-log/request-log.service';
import { RequestLogWriter } from '../request-log/request-log-writer';
import { gatewayName } from './mcp-tool-names';

/** How a tool call ended, as the metrics and the log say it. */
export type McpCallOutcome =
  'ok' | 'tool_error' | 'refused' | 'limited' | 'unavailable' | 'timeout' | 'error';

/** Each outcome as a request log entry has it: the HTTP status the call would have had, and the usage outcome. */
const AS_LOGGED: Record<McpCallOutcome, { status: number; outcome: UsageOutcome }> = {
  ok: { status: 200, outcome: 'ok' },
  // The tool ran and said it failed (`isError`): answered, as the server answered it.
  tool_error: { status: 200, outcome: 'error' },
  refused: { status: 403, outcome: 'rejected' },
  limited: { status: 429, outcome: 'rejected' },
  unavailable: { status: 502, outcome: 'error' },
  timeout: { status: 504, outcome: 'error' },
  error: { status: 502, outcome: 'error' },
};

export interface McpCall {
  principal: Principal;
  req: Request;
  server: string;
  tool: string;
  /** Whether the server listed the tool (else its metric label is "(unlisted)": labels stay bounded). */
  listed: boolean;
  outcome: McpCallOutcome;
  /** The gateway's or the server's error code, null when it answered. */
  errorCode: string | null;
  startedAt: bigint;
  arguments: unknown;
  result: unknown;
}

/**
 * Every tool call through /mcp, counted (switchyard_mcp_calls_total, the duration histogram) and kept in the
 * request log (docs/mcp.md#audit): team, token, person, `mcp.tools/call` as its endpoint, `<server>__<tool>` as
 * its model, `<server>/<tool>` as its deployment, status, outcome, duration. Its arguments and result only when the
 * team keeps content, redacted by the request log's one policy on their way to the store, like a model request's.
 */
@Injectable()
export class McpCallLog {
  private readonly enabled: boolean;

  constructor(
    private readonly writer: RequestLogWriter,
    private readonly metrics: MetricsService,
    config: GatewayConfig,
  ) {
    this.enabled = config.logging.requests.enabled;
  }

  record(call: McpCall): void {
    const seconds = Number(process.hrtime.bigint() - call.startedAt) / 1e9;
    const { principal, req, server, tool, outcome } = call;
    this.metrics.mcpCalls.inc({
      team: principal.teamId,
      server,
      tool: call.listed ? tool : '(unlisted)',
      outcome,
    });
    this.metrics.mcpCallSeconds.observe({ server, outcome }, seconds);
    if (!this.enabled) return;
    const latencyMs = Math.round(seconds * 1e5) / 100;
    const name = gatewayName(server, tool);
    const keep = principal.keepsContent === true;
    this.writer.enqueue({
      entry: {
        id: randomUUID(),
        requestId: req.exchange.requestId,
        at: new Date(Date.now() - latencyMs).toISOString(),
        team: principal.teamId,
        token: { id: principal.tokenId, name: principal.tokenName ?? null },
        person: principal.owner ?? null,
        endpoint: 'mcp.tools/call',
        stream: false,
        model: name.slice(0, 256),
        servedModel: outcome === 'refused' || outcome === 'limited' ? '' : name.slice(0, 256),
        deployment: outcome === 'refused' ? null : `${server}/${tool}`.slice(0, 256),
        attempts: [],
        status: AS_LOGGED[outcome].status,
        outcome: AS_LOGGED[outcome].outcome,
        errorCode: call.errorCode,
        latencyMs,
        ttfbMs: null,
        usage: {
          prompt: 0,
          completion: 0,
          reasoning: 0,
          cached: 0,
          cacheWrite: 0,
          cacheWrite1h: 0,
          estimated: false,
        },
        costNanos: 0,
        traceId: traceIdOf(req.headers.traceparent),
        clientAddress: clientAddress(req) ?? null,
        contentKept: keep,
        cacheHit: false,
      },
      ...(keep ? { content: { request: call.arguments ?? null, response: call.result ?? null } } : {}),
    });
  }
}
