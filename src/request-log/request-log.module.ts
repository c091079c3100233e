import { Module } from '@nestjs/common';
import { GatewayConfig } from '../config/config.schema';
import { AdminRequestLogController, TeamRequestLogController } from './request-log.controller';
import { RequestLog } from './request-log.service';
import { RequestLogRedactor } from './request-log-redactor';
import { RequestLogWriter } from './request-log-writer';
import { REQUEST_LOG_STORE } from './request-log.repository';
import { RedisRequestLogStore } from './redis-request-log.repository';
import { PostgresRequestLogStore } from './postgres/postgres-request-log.repository';
import { AppLogger } from '../common/logging/logger';

/**
 * The request log (docs/request-log.md): entries built from each finished model request (RequestLog, called by
 * the usage recorder), written by the RequestLogWriter to the configured store, read through the admin API and
 * /v1/requests.
 */
@Module({
  controllers: [AdminRequestLogController, TeamRequestLogController],
  providers: [
    RedisRequestLogStore,
    {
      provide: REQUEST_LOG_STORE,
      inject: [GatewayConfig, RedisRequestLogStore, AppLogger],
      useFactory: (config: GatewayConfig, redis: RedisRequestLogStore, logger: AppLogger) => {
        const settings = config.logging.requests;
        if (settings.store !== 'postgres') return redis;
        return new PostgresRequestLogStore({
          postgres: settings.postgres,
          retentionDays: settings.retentionDays,
          onConnection: (state, reason) =>
            state === 'lost'
              ? logger.pino.warn({ reason }, "the request log's PostgreSQL connection was lost")
              : logger.pino.info("the request log's PostgreSQL connection is back"),
        });
      },
    },
    RequestLogRedactor,
    RequestLogWriter,
    RequestLog,
  ],
  // The writer also takes the entries of MCP tool calls (mcp/mcp-call-log.ts).
  exports: [RequestLog, RequestLogRedactor, RequestLogWriter],
})
export class RequestLogModule {}
