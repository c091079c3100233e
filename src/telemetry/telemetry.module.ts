import { Module, type OnApplicationShutdown } from '@nestjs/common';
import { GatewayConfig } from '../config/config.schema';
import { AppLogger } from '../common/logging/logger';
import { RequestLogModule } from '../request-log/request-log.module';
import { RequestLogRedactor } from '../request-log/request-log-redactor';
import { Tracing } from './tracing';

/**
 * Traces over OTLP (docs/tracing.md): `Tracing`, built at boot from `telemetry.otlp` (off when it is absent), its
 * content attributes redacted by the request log's Redactor; the last spans are exported when the app shuts down.
 */
@Module({
  imports: [RequestLogModule],
  providers: [
    {
      provide: Tracing,
      inject: [GatewayConfig, RequestLogRedactor, AppLogger],
      useFactory: (config: GatewayConfig, redactor: RequestLogRedactor, logger: AppLogger) =>
        Tracing.fromConfig(config, redactor, logger),
    },
  ],
  exports: [Tracing],
})
export class TelemetryModule implements OnApplicationShutdown {
  constructor(private readonly tracing: Tracing) {}

  onApplicationShutdown(): Promise<void> {
    return this.tracing.shutdown();
  }
}
