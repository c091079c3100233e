import { Global, Module } from '@nestjs/common';
import { TeamsModule } from '../teams/teams.module';
import { AuthGuard } from './auth.guard';
import { CredentialCache } from './credential.cache';
import { TokenStore } from './token.store';

@Global()
@Module({
  imports: [TeamsModule],
  providers: [CredentialCache, TokenStore, AuthGuard],
  exports: [CredentialCache, TokenStore, AuthGuard],
})
export class AuthModule {}
