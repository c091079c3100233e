import { Module } from '@nestjs/common';
import { LimitsModule } from '../limits/limits.module';
import { TeamsModule } from '../teams/teams.module';
import { AdminUsageController, TeamUsageController } from './usage.controller';
import { UsageQueryService } from './usage-query.service';
import { UsageRecorder } from './usage-recorder';
import { UsageWriter } from './usage-writer';
import { InflightLeases } from './inflight-leases';
import { RequestAdmission } from '../gateway/request-admission';
import { TokenCounter } from './token-counter';
import { USAGE_RECORDS } from './usage-records.repository';
import { RedisUsageRecords } from './redis-usage-records.repository';
import { INFLIGHT_LEASE_STORE } from './inflight-leases.repository';
import { RedisInflightLeases } from './redis-inflight-leases.repository';
import { RequestLogModule } from '../request-log/request-log.module';
import { TelemetryModule } from '../telemetry/telemetry.module';

@Module({
  imports: [LimitsModule, TeamsModule, RequestLogModule, TelemetryModule],
  controllers: [AdminUsageController, TeamUsageController],
  providers: [
    { provide: USAGE_RECORDS, useClass: RedisUsageRecords },
    { provide: INFLIGHT_LEASE_STORE, useClass: RedisInflightLeases },
    UsageWriter,
    UsageRecorder,
    UsageQueryService,
    TokenCounter,
    InflightLeases,
    RequestAdmission,
  ],
  exports: [
    UsageWriter,
    UsageRecorder,
    TokenCounter,
    InflightLeases,
    RequestAdmission,
    RequestLogModule,
    TelemetryModule,
  ],
})
export class UsageModule {}
