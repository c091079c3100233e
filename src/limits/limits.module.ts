import { Module } from '@nestjs/common';
import { TeamsModule } from '../teams/teams.module';
import { LimitsService } from './limits.service';
import { QuotaReporter } from './quota-reporter';

@Module({ imports: [TeamsModule], providers: [LimitsService, QuotaReporter], exports: [LimitsService] })
export class LimitsModule {}
