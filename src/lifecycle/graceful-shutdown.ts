import type { Server } from 'node:http';
import type { INestApplication } from '@nestjs/common';
import type { InFlightTracker } from './in-flight.tracker';
import type { AppLogger } from '../common/logging/logger';

/**
 * SIGTERM: stop accepting connections, let in-flight requests and streams finish
 * (up to graceMs), then cut what is left and close Redis and the upstream pools.
 */
export async function shutdownGracefully(
  app: INestApplication,
  inFlight: InFlightTracker,
  graceMs: number,
  logger: AppLogger,
): Promise<void> {
  inFlight.draining = true;
  const server = app.getHttpServer() as Server;
  const closed = new Promise<void>((resolve) => server.close(() => resolve()));
  server.closeIdleConnections();
  logger.pino.info({ inFlight: inFlight.size, graceMs }, 'shutting down: draining in-flight requests');
  const drained = await inFlight.waitForIdle(graceMs);
  if (!drained) logger.pino.warn({ inFlight: inFlight.size }, 'grace period over: closing remaining connections');
  server.closeAllConnections();
  await closed;
  await app.close();
  logger.pino.info('shutdown complete');
  logger.pino.flush();
}
