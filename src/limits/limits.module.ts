import { Module } from '@nestjs/common';
import { TeamsModule } from '../teams/teams.module';
import { LimitsService } from './limits.service';
import { QuotaReporter } from './quota-reporter';
import { BudgetReport } from './budget-report';

@Module({
  imports: [TeamsModule],
  providers: [LimitsService, QuotaReporter, BudgetReport],
  exports: [LimitsService, BudgetReport],
})
export class LimitsModule {}
