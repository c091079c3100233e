import { Global, Module } from '@nestjs/common';
import { TeamsModule } from '../teams/teams.module';
import { AuthGuard } from './auth.guard';
import { ConsoleSessions } from './console-sessions';
import { CredentialCache } from './credential.cache';
import { TokenStore } from './token.store';

@Global()
@Module({
  imports: [TeamsModule],
  providers: [CredentialCache, TokenStore, AuthGuard, ConsoleSessions],
  exports: [CredentialCache, TokenStore, AuthGuard, ConsoleSessions],
})
export class AuthModule {}
