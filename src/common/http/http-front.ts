import { randomUUID } from 'node:crypto';
import onHeaders from 'on-headers';
import type { NextFunction, Request, Response, Express } from 'express';
import type { GatewayConfig } from '../../config/config.schema';
import { GatewayException } from '../../core/errors/gateway.exception';
import { sendError } from '../../core/errors/error-response';
import { errorShapeAt } from '../../endpoints/endpoints';
import type { AppLogger } from '../logging/logger';
import type { InFlightTracker } from '../../lifecycle/in-flight.tracker';
import { clientAddress } from './client-address';
import { Exchange } from '../../gateway/exchange';

/**
 * The Express layer in front of Nest: request id, trust proxy, the drain's 503, and the access log.
 * Bodies are read later, after authentication (common/http/body-reader.guard.ts).
 */
export function installHttpFront(
  app: Express,
  config: GatewayConfig,
  logger: AppLogger,
  inFlight: InFlightTracker,
): void {
  app.disable('x-powered-by');
  app.set('etag', false);
  // Forwarded headers are believed only when the immediate peer is a configured proxy.
  app.set('trust proxy', config.server.trustedProxies.length ? config.server.trustedProxies : false);

  app.use((req: Request, res: Response, next: NextFunction) => {
    req.exchange = new Exchange(randomUUID());
    res.setHeader('x-request-id', req.exchange.requestId);
    inFlight.begin(res);
    onHeaders(res, () => res.setHeader('server-timing', serverTiming(req.exchange)));
    // `on`, not `once`, for a response's 'close' here and in what it reaches: Node emits it once per response,
    // and once's wrapper is ~180 bytes more for each held stream (docs/performance.md, held streams).
    if (config.accessLog) res.on('close', () => writeAccessLog(req, res, logger));
    next();
  });

  // Draining (SIGTERM): health keeps answering (ready says 503) so orchestrators see it; anything else is a
  // 503 the client can retry elsewhere, and every answer closes its connection so keep-alive clients move on.
  app.use((req: Request, res: Response, next: NextFunction) => {
    if (!inFlight.draining) return next();
    res.setHeader('connection', 'close');
    if (req.path.startsWith('/health/')) return next();
    const exception = new GatewayException(
      'server_shutting_down',
      'The gateway is shutting down; retry the request.',
      { headers: { 'retry-after': '1' } },
    );
    sendError(res, exception, errorShapeAt(req.path).body(exception, req.exchange.requestId));
  });
}

/**
 * `Server-Timing: gateway;dur=<ms>, upstream;dur=<ms>` on every response, computed as the
 * headers go out: upstream is the wait on the backend so far (the whole answer for a
 * non-streaming call, the time to its first byte for a stream), gateway is the rest.
 */
export function serverTiming(ctx: Exchange, now = process.hrtime.bigint()): string {
  const total = Number(now - ctx.startedAt) / 1e6;
  if (ctx.upstreamStartedAt === undefined) return `gateway;dur=${total.toFixed(2)}`;
  const upstream = Number((ctx.upstreamEndedAt ?? now) - ctx.upstreamStartedAt) / 1e6;
  return `gateway;dur=${Math.max(0, total - upstream).toFixed(2)}, upstream;dur=${upstream.toFixed(2)}`;
}

/** One JSON line per request. Never headers, never bodies: they can carry secrets. */
function writeAccessLog(req: Request, res: Response, logger: AppLogger): void {
  const ctx = req.exchange;
  const latencyMs = Number(process.hrtime.bigint() - ctx.startedAt) / 1e6;
  logger.access.info(
    {
      type: 'access',
      requestId: ctx.requestId,
      method: req.method,
      path: requestPath(req),
      status: res.statusCode,
      latencyMs: Math.round(latencyMs * 100) / 100,
      clientIp: clientAddress(req),
      clientHost: req.hostname,
      team: ctx.principal?.teamId,
      tokenId: ctx.principal?.tokenId,
      model: ctx.model,
      backend: ctx.backend,
      servedModel: ctx.servedModel !== ctx.model ? ctx.servedModel : undefined,
      attempts: ctx.attempts,
      stream: ctx.stream,
      tokens: ctx.tokens,
      error: ctx.errorCode,
      aborted: ctx.aborted || (!res.writableFinished ? true : undefined),
    },
    'request',
  );
}

/**
 * The path the client asked for, without the query (it may carry anything). Not `req.path`: a response finished
 * inside a mounted middleware (the console's files, app.use('/console')) leaves Express's req.url cut to the part
 * after the mount, and the access log said "/" for /console/.
 */
function requestPath(req: Request): string {
  const url = req.originalUrl;
  const query = url.indexOf('?');
  return query < 0 ? url : url.slice(0, query);
}
