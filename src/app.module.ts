import { Global, Module, type DynamicModule } from '@nestjs/common';
import { APP_FILTER, APP_GUARD, APP_PIPE } from '@nestjs/core';
import { AdminModule } from './admin/admin.module';
import { AuthGuard } from './auth/auth.guard';
import { AuthModule } from './auth/auth.module';
import { BillingModule } from './billing/billing.module';
import { EndpointsModule } from './endpoints/endpoints.module';
import { BodyReaderGuard } from './common/http/body-reader.guard';
import { EndpointErrorFilter } from './endpoints/endpoint-error.filter';
import { AppLogger } from './common/logging/logger';
import { GatewayValidationPipe } from './common/validation/validation.pipe';
import { ConfigModule } from './config/config.module';
import { ConsoleModule } from './console/console.module';
import type { GatewayConfig } from './config/config.schema';
import { HealthModule } from './health/health.module';
import { InFlightTracker } from './lifecycle/in-flight.tracker';
import { McpModule } from './mcp/mcp.module';
import { MetricsModule } from './metrics/metrics.module';
import { OpenApiModule } from './openapi/openapi.module';
import { RedisModule } from './redis/redis.module';
import { RoutingModule } from './routing/routing.module';
import { UsageModule } from './usage/usage.module';

/** Process-wide singletons made before Nest starts (the logger logs Nest's own boot). */
@Global()
@Module({})
export class RuntimeModule {
  static forRoot(logger: AppLogger, inFlight: InFlightTracker): DynamicModule {
    return {
      module: RuntimeModule,
      providers: [
        { provide: AppLogger, useValue: logger },
        { provide: InFlightTracker, useValue: inFlight },
      ],
      exports: [AppLogger, InFlightTracker],
    };
  }
}

/** The global guard, pipe and filter are registered here and nowhere else. */
@Module({})
export class AppModule {
  static forRoot(config: GatewayConfig, logger: AppLogger, inFlight: InFlightTracker): DynamicModule {
    return {
      module: AppModule,
      imports: [
        ConfigModule.forRoot(config),
        RuntimeModule.forRoot(logger, inFlight),
        RedisModule,
        BillingModule,
        // Express tries routes in registration order, so the hot route is registered first: behind the ~30
        // admin routes, every chat request paid for ~30 failed path matches.
        EndpointsModule,
        MetricsModule,
        AuthModule,
        AdminModule,
        RoutingModule,
        UsageModule,
        HealthModule,
        OpenApiModule,
        McpModule,
        ...(config.console.enabled ? [ConsoleModule] : []),
      ],
      providers: [
        { provide: APP_GUARD, useExisting: AuthGuard },
        // After AuthGuard (global guards run in this order): no body is read for a caller without credentials.
        { provide: APP_GUARD, useClass: BodyReaderGuard },
        { provide: APP_PIPE, useClass: GatewayValidationPipe },
        { provide: APP_FILTER, useClass: EndpointErrorFilter },
      ],
    };
  }
}
