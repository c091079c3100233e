import type { Server } from 'node:http';
import type { INestApplication } from '@nestjs/common';
import type { InFlightTracker } from './in-flight.tracker';
import type { AppLogger } from '../common/logging/logger';

/**
 * How long requests cut at the deadline get to write their error event and be accounted before every connection is
 * closed (which drops what a socket had not sent yet). On a loaded 2-core replica 2 s was sometimes too short: a
 * client then saw its stream cut without the error. 4 s still fits the 5 s the Kubernetes manifests leave to exit.
 */
const CUT_FLUSH_MS = 4000;

/**
 * SIGTERM: keep listening so health checks see the drain (ready answers 503) and new requests get a
 * 503 `server_shutting_down` (http-front.ts); let in-flight requests and streams finish (up to graceMs);
 * then end what is left with an in-band `server_shutting_down` error (accounted as the gateway's doing, not
 * the client's), stop listening, and close Redis (which flushes the usage queue) and the upstream pools.
 */
export async function shutdownGracefully(
  app: INestApplication,
  inFlight: InFlightTracker,
  graceMs: number,
  logger: AppLogger,
): Promise<void> {
  inFlight.draining = true;
  const server = app.getHttpServer() as Server;
  server.closeIdleConnections();
  logger.pino.info({ inFlight: inFlight.size, graceMs }, 'shutting down: draining in-flight requests');
  const drained = await inFlight.waitForIdle(graceMs);
  if (!drained) {
    logger.pino.warn(
      { inFlight: inFlight.size },
      'grace period over: ending the remaining requests with server_shutting_down',
    );
    inFlight.cutRemaining();
    await inFlight.waitForIdle(CUT_FLUSH_MS);
  }
  const closed = new Promise<void>((resolve) => server.close(() => resolve()));
  server.closeAllConnections();
  await closed;
  await app.close();
  logger.pino.info('shutdown complete');
  logger.pino.flush();
}
