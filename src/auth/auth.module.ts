import { Global, Module } from '@nestjs/common';
import { DiscoveryModule } from '@nestjs/core';
import { AdminAccess } from '../access/admin-access';
import { DeclaredRoutes } from '../access/declared-routes';
import { RedisTeamMemberRecords } from '../access/redis-team-member-records.repository';
import { TEAM_MEMBER_RECORDS } from '../access/team-member-records.repository';
import type Redis from 'ioredis';
import { AppLogger } from '../common/logging/logger';
import { REDIS } from '../redis/redis.module';
import { RedisKeys } from '../redis/redis-keys';
import { TeamsModule } from '../teams/teams.module';
import {
  ADMIN_KEY_FAILURE_COUNTS,
  ADMIN_KEY_FAILURE_WINDOW_SECONDS,
  AdminKeyThrottle,
} from './admin-key-throttle';
import { AdminActors } from './admin-actors';
import { AuthGuard } from './auth.guard';
import { ConsoleSessions } from './console-sessions';
import { CredentialCache } from './credential.cache';
import { FallingBackFailureCounts, MemoryFailureCounts, RedisFailureCounts } from './failure-counts';
import { TokenStore } from './token.store';
import { PersonalTokens } from './personal-tokens';
import { PERSONAL_TOKEN_RECORDS } from './personal-token-records.repository';
import { RedisPersonalTokenRecords } from './redis-personal-token-records.repository';
import { TOKEN_RECORDS } from './token-records.repository';
import { RedisTokenRecords } from './redis-token-records.repository';
import { CONSOLE_SESSION_RECORDS } from './console-session-records.repository';
import { RedisConsoleSessionRecords } from './redis-console-session-records.repository';

@Global()
@Module({
  imports: [TeamsModule, DiscoveryModule],
  providers: [
    { provide: TEAM_MEMBER_RECORDS, useClass: RedisTeamMemberRecords },
    AdminActors,
    AdminAccess,
    DeclaredRoutes,
    { provide: TOKEN_RECORDS, useClass: RedisTokenRecords },
    { provide: CONSOLE_SESSION_RECORDS, useClass: RedisConsoleSessionRecords },
    { provide: PERSONAL_TOKEN_RECORDS, useClass: RedisPersonalTokenRecords },
    PersonalTokens,
    CredentialCache,
    TokenStore,
    AuthGuard,
    ConsoleSessions,
    AdminKeyThrottle,
    {
      provide: ADMIN_KEY_FAILURE_COUNTS,
      inject: [REDIS, RedisKeys, AppLogger],
      useFactory: (redis: Redis, keys: RedisKeys, logger: AppLogger) =>
        new FallingBackFailureCounts(
          redis,
          new RedisFailureCounts(redis, keys, ADMIN_KEY_FAILURE_WINDOW_SECONDS),
          new MemoryFailureCounts(ADMIN_KEY_FAILURE_WINDOW_SECONDS),
          logger.pino,
        ),
    },
  ],
  exports: [
    { provide: PERSONAL_TOKEN_RECORDS, useClass: RedisPersonalTokenRecords },
    PersonalTokens,
    CredentialCache,
    TokenStore,
    AuthGuard,
    ConsoleSessions,
    AdminKeyThrottle,
    TEAM_MEMBER_RECORDS,
    DeclaredRoutes,
    AdminActors,
    AdminAccess,
  ],
})
export class AuthModule {}
