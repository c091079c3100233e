import { Module } from '@nestjs/common';
import { AuditModule } from '../audit/audit.module';
import { TeamsModule } from '../teams/teams.module';
import { LimitsModule } from '../limits/limits.module';
import { AccessAdminService } from './access-admin.service';
import { AdminController } from './admin.controller';
import { TeamMembersController } from './team-members.controller';
import { TeamMembersService } from './team-members.service';

@Module({
  imports: [TeamsModule, AuditModule, LimitsModule],
  controllers: [AdminController, TeamMembersController],
  providers: [AccessAdminService, TeamMembersService],
  exports: [AccessAdminService],
})
export class AdminModule {}
