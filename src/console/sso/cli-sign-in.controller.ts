import { Body, Controller, Get, HttpCode, Post, Req } from '@nestjs/common';
import type { Request } from 'express';
import { formatRole } from '../../access/roles';
import { AuditLog } from '../../audit/audit.log';
import { AdminKeyThrottle } from '../../auth/admin-key-throttle';
import { PERSONAL_TOKEN_DEFAULT_DAYS, PersonalTokens } from '../../auth/personal-tokens';
import { Public } from '../../auth/route-access.decorators';
import { AppLogger } from '../../common/logging/logger';
import { GatewayValidationPipe } from '../../common/validation/validation.pipe';
import type { OidcConfig } from '../../config/config.schema';
import { GatewayException } from '../../core/errors/gateway.exception';
import { CliTokenRequestDto } from '../console.dto';
import { CLI_SIGN_IN_REFUSED, CliIdTokens } from './cli-id-tokens';
import { noRoleReason, personOf, rolesOf } from './group-roles';
import { OidcClient } from './oidc-client';

/**
 * `switchyard login` (docs/sso.md#the-cli-switchyard-login): the gateway says where and as which client the CLI signs in, and
 * exchanges the ID token the CLI got there for a personal admin token of the person, with the roles their groups
 * give them, exactly as a console sign-in would.
 */
@Public()
@Controller('console/api/sso')
export class CliSignInController {
  constructor(
    private readonly oidc: OidcClient,
    private readonly idTokens: CliIdTokens,
    private readonly throttle: AdminKeyThrottle,
    private readonly personalTokens: PersonalTokens,
    private readonly audit: AuditLog,
    private readonly logger: AppLogger,
  ) {}

  /** Where the CLI signs in: the provider's issuer, the CLI's public client, the scopes to ask. */
  @Get('cli')
  signInTarget() {
    const oidc = cliConfigured(this.oidc.configured);
    return { object: 'sso.cli', issuer: oidc.issuer, clientId: oidc.cli.clientId, scopes: oidc.scopes };
  }

  /** The ID token checked (and counted, when wrong, with wrong admin keys), and a personal token issued for it. */
  @Post('cli-token')
  @HttpCode(201)
  async exchange(
    @Body(new GatewayValidationPipe({ strict: true })) body: CliTokenRequestDto,
    @Req() req: Request,
  ) {
    const oidc = cliConfigured(this.oidc.configured);
    const claims = await this.throttle.verifyIdToken(
      () => this.idTokens.verify(body.idToken, oidc.cli.clientId),
      req.ip,
    );
    const person = personOf(claims);
    const roles = rolesOf(claims, oidc);
    // As at a console sign-in: what this one says of the person is what their personal tokens act with from now on.
    await this.personalTokens.rememberSignIn(person, roles);
    if (roles.length === 0) {
      this.logger.pino.warn({ reason: noRoleReason(claims, oidc) }, CLI_SIGN_IN_REFUSED);
      throw new GatewayException(
        'permission_denied',
        `${person.email ?? person.subject} has no role in this gateway: none of their groups (the ID token's "${oidc.groupsClaim}" claim) is in auth.oidc.groupRoles.`,
      );
    }
    const name = body.name ?? 'switchyard CLI';
    const issued = await this.personalTokens.issue(
      person,
      name,
      body.expiresInDays ?? PERSONAL_TOKEN_DEFAULT_DAYS,
    );
    await this.audit.write(
      {
        actor: `cli:${person.email ?? person.subject}`,
        person: { subject: person.subject, ...(person.email ? { email: person.email } : {}) },
        ip: req.ip,
        requestId: req.exchange.requestId,
      },
      'admin_token.issue',
      `person/${person.subject}/admin-token/${issued.id}`,
      { name, expiresAt: issued.expiresAt, via: 'cli-sign-in', roles: roles.map(formatRole) },
    );
    return { ...issued, person, roles: roles.map(formatRole) };
  }
}

/** auth.oidc with its CLI client, or the usual 404 when either is not configured. */
function cliConfigured(oidc: OidcConfig | undefined): OidcConfig & { cli: { clientId: string } } {
  if (!oidc?.cli)
    throw new GatewayException(
      'not_found',
      'Signing in from the CLI is not configured (auth.oidc.cli: the public client registered for the CLI).',
    );
  return oidc as OidcConfig & { cli: { clientId: string } };
}
