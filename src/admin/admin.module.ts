import { Module } from '@nestjs/common';
import { AuditModule } from '../audit/audit.module';
import { TeamsModule } from '../teams/teams.module';
import { LimitsModule } from '../limits/limits.module';
import { AccessAdminService } from './access-admin.service';
import { AdminController } from './admin.controller';
import { OwnTeamTokensController } from './own-team-tokens.controller';
import { OwnTeamTokensService } from './own-team-tokens.service';
import { PersonalTokensController } from './personal-tokens.controller';
import { PersonalTokensAdminService } from './personal-tokens-admin.service';
import { TeamMembersController } from './team-members.controller';
import { TeamMembersService } from './team-members.service';

@Module({
  imports: [TeamsModule, AuditModule, LimitsModule],
  controllers: [AdminController, TeamMembersController, PersonalTokensController, OwnTeamTokensController],
  providers: [AccessAdminService, TeamMembersService, PersonalTokensAdminService, OwnTeamTokensService],
  exports: [AccessAdminService],
})
export class AdminModule {}
