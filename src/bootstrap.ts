import 'reflect-metadata';
import { NestFactory } from '@nestjs/core';
import type { NestExpressApplication } from '@nestjs/platform-express';
import type { DestinationStream } from 'pino';
import { AppModule } from './app.module';
import type { Server } from 'node:http';
import { answerClientErrorsInOpenAIShape } from './common/http/client-errors';
import { installHttpFront } from './common/http/http-front';
import { installConsole } from './console/console-static';
import { AppLogger } from './common/logging/logger';
import type { GatewayConfig } from './config/config.schema';
import { shutdownGracefully } from './lifecycle/graceful-shutdown';
import { InFlightTracker } from './lifecycle/in-flight.tracker';

export interface Gateway {
  app: NestExpressApplication;
  /** The address it listens on, e.g. http://127.0.0.1:8080 */
  url: string;
  logger: AppLogger;
  /** Drain and stop (what SIGTERM does). */
  shutdown(graceMs?: number): Promise<void>;
}

export interface GatewayOptions {
  /** Where JSON logs go (stdout by default); tests capture them. */
  logDestination?: DestinationStream;
}

/** Builds and starts the gateway; used by main.ts and by the tests, so both run the same app. */
export async function startGateway(config: GatewayConfig, options: GatewayOptions = {}): Promise<Gateway> {
  const logger = new AppLogger(config.log.level, options.logDestination);
  const inFlight = new InFlightTracker();
  const app = await NestFactory.create<NestExpressApplication>(AppModule.forRoot(config, logger, inFlight), {
    bodyParser: false, // ours, with our limits and error shape (installHttpFront)
    logger,
    abortOnError: false,
  });
  installHttpFront(app.getHttpAdapter().getInstance(), config, logger, inFlight);
  if (config.console.enabled) installConsole(app.getHttpAdapter().getInstance());
  answerClientErrorsInOpenAIShape(app.getHttpServer() as Server);
  (app.getHttpServer() as Server).keepAliveTimeout = config.server.keepAliveTimeoutMs;
  await app.listen(config.server.port, config.server.host);
  const address = app.getHttpServer().address() as { address: string; port: number; family: string };
  const host = address.family === 'IPv6' ? `[${address.address}]` : address.address;
  const url = `http://${host === '0.0.0.0' || host === '[::]' ? '127.0.0.1' : host}:${address.port}`;
  logger.pino.info({ url, models: Object.keys(config.models).length }, 'switchyard listening');
  return {
    app,
    url,
    logger,
    shutdown: (graceMs = config.server.shutdownGraceMs) => shutdownGracefully(app, inFlight, graceMs, logger),
  };
}
