import { Module } from '@nestjs/common';
import { TeamStore } from './team.store';

@Module({ providers: [TeamStore], exports: [TeamStore] })
export class TeamsModule {}
