import { Module } from '@nestjs/common';
import { TeamStore } from './team.store';
import { TEAM_RECORDS } from './team-records.repository';
import { RedisTeamRecords } from './redis-team-records.repository';

@Module({
  providers: [{ provide: TEAM_RECORDS, useClass: RedisTeamRecords }, TeamStore],
  exports: [TeamStore],
})
export class TeamsModule {}
