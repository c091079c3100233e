import { randomUUID } from 'node:crypto';
import { Injectable } from '@nestjs/common';
import type { Request } from 'express';
import type { Principal } from '../auth/principal';
import { clientAddress } from '../common/http/client-address';
import { GatewayConfig } from '../config/config.schema';
import type { UsageOutcome } from '../core/request-outcome';
import { MetricsService } from '../metrics/metrics.service';
import { RequestLogRedactor } from '../request-log/request-log-redactor';
import { traceIdOf } from '../request-log/request-log.service';
import { RequestLogWriter } from '../request-log/request-log-writer';
import { gatewayName } from './mcp-tool-names';

/**
 * The requests a caller makes that do work on one server, each limited (toolCallsPerMinute), logged and counted:
 * lists are not (they are answered from every permitted server at once, and cost the servers little).
 */
export type McpMethod = 'tools/call' | 'prompts/get' | 'resources/read';

/** How a call ended, as the metrics and the log say it. `aborted`: the client went away before its answer. */
export type McpCallOutcome =
  'ok' | 'tool_error' | 'refused' | 'limited' | 'unavailable' | 'timeout' | 'error' | 'aborted';

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
  // Nobody got an answer: 499, the status the MCP endpoint gives a client that left (nginx's "client closed request").
  aborted: { status: 499, outcome: 'aborted' },
};

/**
 * The `tool` label of what is not a tool call: bounded (a prompt's name and a resource's URI are the client's to
 * choose, and a URI has no bound at all), so the request log, not the metric, tells them apart.
 */
const LABEL_OF: Record<Exclude<McpMethod, 'tools/call'>, string> = {
  'prompts/get': '(prompt)',
  'resources/read': '(resource)',
};

export interface McpCall {
  principal: Principal;
  req: Request;
  method: McpMethod;
  server: string;
  /** The tool's or the prompt's own name, or the resource's URI. */
  name: string;
  /** Whether the server listed the tool (else its metric label is "(unlisted)": labels stay bounded). */
  listed: boolean;
  outcome: McpCallOutcome;
  /** The gateway's or the server's error code, null when it answered. */
  errorCode: string | null;
  startedAt: bigint;
  /** What was asked (a call's or a prompt's arguments, a read's URI): kept only as content. */
  arguments: unknown;
  result: unknown;
}

/**
 * Every tool call, prompt get and resource read through /mcp, counted (switchyard_mcp_calls_total, the duration
 * histogram) and kept in the request log (docs/mcp.md#audit): team, token, person, `mcp.<method>` as its endpoint,
 * `<server>__<tool>` (or `<server>__<prompt>`, or the resource's URI, redacted) as its model, `<server>/<tool>` (or
 * `<server>/<prompt>`, or `<server>`) as its deployment, status, outcome, duration. What was asked and answered only
 * when the team keeps content, redacted by the request log's one policy on their way to the store, like a model
 * request's.
 */
@Injectable()
export class McpCallLog {
  private readonly enabled: boolean;

  constructor(
    private readonly writer: RequestLogWriter,
    private readonly metrics: MetricsService,
    private readonly redactor: RequestLogRedactor,
    config: GatewayConfig,
  ) {
    this.enabled = config.logging.requests.enabled;
  }

  record(call: McpCall): void {
    const seconds = Number(process.hrtime.bigint() - call.startedAt) / 1e9;
    const { principal, req, method, server, name, outcome } = call;
    this.metrics.mcpCalls.inc({
      team: principal.teamId,
      server,
      tool: method !== 'tools/call' ? LABEL_OF[method] : call.listed ? name : '(unlisted)',
      outcome,
    });
    this.metrics.mcpCallSeconds.observe({ server, outcome }, seconds);
    if (!this.enabled) return;
    const latencyMs = Math.round(seconds * 1e5) / 100;
    // A URI is the client's, and may carry what the redaction policy hides (an address, a key): shown to whoever
    // reads the log, content kept or not.
    const asked = (
      method === 'resources/read' ? this.redactor.redactText(name) : gatewayName(server, name)
    ).slice(0, 256);
    const keep = principal.keepsContent === true;
    this.writer.enqueue({
      entry: {
        id: randomUUID(),
        requestId: req.exchange.requestId,
        at: new Date(Date.now() - latencyMs).toISOString(),
        team: principal.teamId,
        token: { id: principal.tokenId, name: principal.tokenName ?? null },
        person: principal.owner ?? null,
        endpoint: `mcp.${method}`,
        stream: false,
        model: asked,
        servedModel: outcome === 'refused' || outcome === 'limited' ? '' : asked,
        deployment:
          outcome === 'refused'
            ? null
            : method === 'resources/read'
              ? server
              : `${server}/${name}`.slice(0, 256),
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
