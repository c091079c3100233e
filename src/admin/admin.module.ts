import { Module } from '@nestjs/common';
import { AuditModule } from '../audit/audit.module';
import { TeamsModule } from '../teams/teams.module';
import { LimitsModule } from '../limits/limits.module';
import { AccessAdminService } from './access-admin.service';
import { AdminController } from './admin.controller';

@Module({
  imports: [TeamsModule, AuditModule, LimitsModule],
  controllers: [AdminController],
  providers: [AccessAdminService],
  exports: [AccessAdminService],
})
export class AdminModule {}
