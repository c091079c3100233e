import { Module } from '@nestjs/common';
import { TeamsModule } from '../teams/teams.module';
import { LimitsService } from './limits.service';
import { QuotaReporter } from './quota-reporter';
import { BudgetReport } from './budget-report';
import { LIMIT_COUNTERS } from './limit-counters.repository';
import { RedisLimitCounters } from './redis-limit-counters.repository';

@Module({
  imports: [TeamsModule],
  providers: [
    { provide: LIMIT_COUNTERS, useClass: RedisLimitCounters },
    LimitsService,
    QuotaReporter,
    BudgetReport,
  ],
  exports: [LimitsService, BudgetReport],
})
export class LimitsModule {}
