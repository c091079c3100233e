import { Module, type DynamicModule } from '@nestjs/common';
import { AdminModule } from '../admin/admin.module';
import { RuntimeModule } from '../app.module';
import { AuditModule } from '../audit/audit.module';
import { AuthModule } from '../auth/auth.module';
import { BillingModule } from '../billing/billing.module';
import { AppLogger } from '../common/logging/logger';
import { ConfigModule } from '../config/config.module';
import type { GatewayConfig } from '../config/config.schema';
import { InFlightTracker } from '../lifecycle/in-flight.tracker';
import { LimitsModule } from '../limits/limits.module';
import { MetricsModule } from '../metrics/metrics.module';
import { RedisModule } from '../redis/redis.module';
import { TeamsModule } from '../teams/teams.module';
import { RedisUsageRecords } from '../usage/redis-usage-records.repository';
import { UsageQueryService } from '../usage/usage-query.service';
import { USAGE_RECORDS } from '../usage/usage-records.repository';

/** The gateway's own services without HTTP: the CLI changes exactly what the admin API changes. */
@Module({})
export class CliModule {
  static forRoot(config: GatewayConfig, logger: AppLogger): DynamicModule {
    return {
      module: CliModule,
      imports: [
        ConfigModule.forRoot(config),
        RuntimeModule.forRoot(logger, new InFlightTracker()),
        RedisModule,
        BillingModule,
        MetricsModule,
        AuthModule,
        TeamsModule,
        AuditModule,
        AdminModule,
        LimitsModule,
      ],
      providers: [{ provide: USAGE_RECORDS, useClass: RedisUsageRecords }, UsageQueryService],
      exports: [UsageQueryService],
    };
  }
}
