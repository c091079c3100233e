import {
  ROOT_CONTEXT,
  SpanKind,
  SpanStatusCode,
  defaultTextMapGetter,
  defaultTextMapSetter,
  trace,
  type Attributes,
  type Context,
  type Span,
  type TextMapPropagator,
  type Tracer,
} from '@opentelemetry/api';
import type { Request } from 'express';
import { clientAddress } from '../common/http/client-address';
import type { UpstreamCall } from '../core/upstream-call';
import { GatewayException } from '../core/errors/gateway.exception';
import type { Exchange, TokenCounts } from '../gateway/exchange';
import type { RequestTrace, TracedCall } from '../gateway/request-trace';
import { isAbort } from '../providers/upstream-client';
import type { Redactor } from '../request-log/redaction/redactor';
import { contentAttribute, inputMessages, outputMessages } from './gen-ai-content';
import { genAiProviderName } from './gen-ai-provider';
import { ATTR, SWITCHYARD } from './semconv';

/** What every request's spans are made with: one set per gateway (Tracing). */
export interface SpanTools {
  tracer: Tracer;
  propagator: TextMapPropagator;
  redactor: Redactor;
  /** `server.address` / `server.port` of a backend, by its id. */
  serverOf(backendId: string): { address: string; port: number } | undefined;
}

/**
 * One traced request's spans (docs/tracing.md): a SERVER span from the request's arrival (its Exchange's start) to
 * the response's close, the child of the caller's `traceparent` when it sent one; under it a CLIENT span per upstream
 * call, named `<operation> <upstream model>` with the GenAI attributes. The calls of a request are made one after
 * another (a retry or fallback only once the previous call failed), so one call is open at a time: a failed call's
 * span ends when it fails, the answering call's when the request ends, with the usage the request counted.
 * Attributes are only built for a sampled trace; an unsampled one still has ids, which go upstream.
 */
export class RequestSpans implements RequestTrace {
  readonly traceId: string;
  private readonly server: Span;
  /** The server span as the calls' parent. */
  private readonly parent: Context;
  /** The call under way, or the one that answered. */
  private call?: Span;
  /** The redacted input messages, built once for all of a request's calls. */
  private input?: string;
  private ended = false;

  constructor(
    private readonly tools: SpanTools,
    private readonly exchange: Exchange,
    req: Request,
  ) {
    const path = (req.originalUrl ?? req.url).split('?', 1)[0];
    const remote = tools.propagator.extract(ROOT_CONTEXT, req.headers, defaultTextMapGetter);
    this.server = tools.tracer.startSpan(
      `${req.method} ${path}`,
      { kind: SpanKind.SERVER, startTime: epochMs(exchange.startedAt) },
      remote,
    );
    this.parent = trace.setSpan(ROOT_CONTEXT, this.server);
    this.traceId = this.server.spanContext().traceId;
    if (this.server.isRecording())
      this.server.setAttributes({
        [ATTR.httpRequestMethod]: req.method,
        [ATTR.httpRoute]: path,
        [ATTR.urlPath]: path,
        [ATTR.urlScheme]: req.protocol,
        [ATTR.clientAddress]: clientAddress(req),
        [ATTR.userAgent]: req.headers['user-agent'],
        [SWITCHYARD.requestId]: exchange.requestId,
      });
  }

  calling(call: UpstreamCall, target: TracedCall): void {
    this.call?.end(); // each call ends its span when it fails; this is only a guard against a leaked one
    const { deployment, chat } = target;
    const span = this.tools.tracer.startSpan(
      `${target.operation} ${deployment.upstreamModel}`,
      { kind: SpanKind.CLIENT },
      this.parent,
    );
    this.call = span;
    const headers = { ...call.headers }; // an adapter's headers object may be shared: never written to
    this.tools.propagator.inject(trace.setSpan(ROOT_CONTEXT, span), headers, defaultTextMapSetter);
    call.headers = headers;
    if (!span.isRecording()) return;
    span.setAttributes(callAttributes(target, this.tools.serverOf(deployment.backend.id)));
    if (chat && this.exchange.principal?.keepsContent)
      span.setAttribute(
        ATTR.inputMessages,
        (this.input ??= contentAttribute(inputMessages(chat.messages), this.tools.redactor)),
      );
  }

  callFailed(error: unknown): void {
    const span = this.call;
    if (!span) return; // failed before it was sent (building the call, a backoff cut short): no span
    this.call = undefined;
    failed(span, errorTypeOf(error));
    span.end();
  }

  end(statusCode: number): void {
    if (this.ended) return;
    this.ended = true;
    if (this.call) this.endAnswered(this.call);
    const exchange = this.exchange;
    const server = this.server;
    if (server.isRecording()) {
      server.setAttribute(ATTR.httpResponseStatusCode, statusCode);
      if (exchange.principal) server.setAttribute(SWITCHYARD.team, exchange.principal.teamId);
      if (exchange.model !== undefined) server.setAttribute(SWITCHYARD.model, exchange.model);
      // A server span is in error for a 5xx only: a 4xx is the client's (the conventions' HTTP server rule).
      if (statusCode >= 500) failed(server, exchange.errorCode ?? String(statusCode));
    }
    server.end();
  }

  /** The call that answered (or, left open, one withdrawn before it could: a local model the admission refused). */
  private endAnswered(span: Span): void {
    const exchange = this.exchange;
    this.call = undefined;
    const answered = exchange.servedModel !== undefined;
    if (span.isRecording()) {
      if (answered) {
        span.setAttributes(usageAttributes(exchange.tokens));
        if (exchange.upstreamModel !== undefined)
          span.setAttribute(ATTR.responseModel, exchange.upstreamModel);
        if (exchange.answer !== undefined && exchange.principal?.keepsContent)
          span.setAttribute(
            ATTR.outputMessages,
            contentAttribute(outputMessages(exchange.answer), this.tools.redactor),
          );
      }
      const failure = answered
        ? (exchange.upstreamErrorReason ?? (exchange.aborted ? 'cancelled' : undefined))
        : (exchange.errorCode ?? 'cancelled');
      if (failure) failed(span, failure);
    }
    span.end(exchange.upstreamEndedAt !== undefined ? epochMs(exchange.upstreamEndedAt) : undefined);
  }
}

/** A call's attributes, known when it starts (the conventions ask for these at start, for samplers). */
export function callAttributes(
  target: TracedCall,
  server: { address: string; port: number } | undefined,
): Attributes {
  const { deployment, chat } = target;
  const attributes: Attributes = {
    [ATTR.operationName]: target.operation,
    [ATTR.providerName]: genAiProviderName(deployment.backend.adapter.family),
    [ATTR.requestModel]: deployment.upstreamModel,
    [SWITCHYARD.model]: target.model,
    [SWITCHYARD.deployment]: deployment.id,
    [SWITCHYARD.fallback]: target.fallback,
  };
  if (server) {
    attributes[ATTR.serverAddress] = server.address;
    attributes[ATTR.serverPort] = server.port;
  }
  if (chat) {
    attributes[ATTR.requestStream] = chat.stream === true;
    const maxTokens = chat.max_completion_tokens ?? chat.max_tokens;
    if (typeof maxTokens === 'number') attributes[ATTR.requestMaxTokens] = maxTokens;
    if (typeof chat.temperature === 'number') attributes[ATTR.requestTemperature] = chat.temperature;
    if (typeof chat.top_p === 'number') attributes[ATTR.requestTopP] = chat.top_p;
  }
  return attributes;
}

/**
 * The request's usage as the answering call's: input tokens include the cache reads and writes (the conventions'
 * rule; the gateway's prompt count already does, for every family), output tokens include reasoning.
 */
export function usageAttributes(tokens: TokenCounts | undefined): Attributes {
  if (!tokens) return {};
  const attributes: Attributes = {
    [ATTR.inputTokens]: tokens.prompt,
    [ATTR.outputTokens]: tokens.completion,
  };
  if (tokens.cached) attributes[ATTR.cacheReadInputTokens] = tokens.cached;
  if (tokens.cacheWrite) attributes[ATTR.cacheCreationInputTokens] = tokens.cacheWrite;
  if (tokens.reasoning) attributes[ATTR.reasoningOutputTokens] = tokens.reasoning;
  if (tokens.estimated) attributes[SWITCHYARD.usageEstimated] = true;
  return attributes;
}

/** `error.type` of a failed call: the gateway's error code (bounded), `cancelled` for an abort, else the error's name. */
export function errorTypeOf(error: unknown): string {
  if (error instanceof GatewayException) return error.code;
  if (isAbort(error)) return 'cancelled';
  return error instanceof Error ? error.name : '_OTHER';
}

function failed(span: Span, errorType: string): void {
  span.setAttribute(ATTR.errorType, errorType);
  span.setStatus({ code: SpanStatusCode.ERROR });
}

/** A process.hrtime.bigint() instant as milliseconds since the epoch (what the spans' times are given in). */
function epochMs(at: bigint): number {
  return Date.now() - Number(process.hrtime.bigint() - at) / 1e6;
}
