import { Module } from '@nestjs/common';
import { AuditModule } from '../audit/audit.module';
import { ConsoleSessionController } from './console-session.controller';
import { CliIdTokens } from './sso/cli-id-tokens';
import { CliSignInController } from './sso/cli-sign-in.controller';
import { OidcClient } from './sso/oidc-client';
import { SsoController } from './sso/sso.controller';
import { SsoFlows } from './sso/sso-flows';

/**
 * The admin web console: its sign-in API here (the admin key, and SSO through auth.oidc in sso/, where the CLI's
 * sign-in is too), its page served by installConsole (console-static.ts).
 */
@Module({
  imports: [AuditModule],
  controllers: [ConsoleSessionController, SsoController, CliSignInController],
  providers: [OidcClient, SsoFlows, CliIdTokens],
})
export class ConsoleModule {}
