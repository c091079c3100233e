import { Controller, Get, Query, Req, Res } from '@nestjs/common';
import { parse as parseCookies } from 'cookie';
import type { Request, Response } from 'express';
import { AuditLog } from '../../audit/audit.log';
import { AppLogger } from '../../common/logging/logger';
import { ConsoleSessions } from '../../auth/console-sessions';
import { PersonalTokens } from '../../auth/personal-tokens';
import { Public } from '../../auth/route-access.decorators';
import { GatewayException } from '../../core/errors/gateway.exception';
import { formatRole } from '../../access/roles';
import { setSessionCookie } from '../console-session-cookie';
import { noRoleReason, personOf, rolesOf } from './group-roles';
import { OidcClient, SIGN_IN_REFUSED } from './oidc-client';
import { SSO_FLOW_TTL_SECONDS, SsoFlows } from './sso-flows';
import { refuse } from './refusal-page';

/** The cookie that ties the provider's answer to the browser that started the flow. */
export const SSO_FLOW_COOKIE = 'sy_sso_flow';
const FLOW_COOKIE_PATH = '/console/api/sso/';
export const CALLBACK_PATH = '/console/api/sso/callback';

/**
 * Console sign-in through the organisation's identity provider (auth.oidc): the authorization-code flow with
 * PKCE, state and nonce, ending in the same session cookie as the admin-key sign-in, carrying the person and the
 * roles their groups give them (auth.oidc.groupRoles).
 */
@Public()
@Controller('console/api/sso')
export class SsoController {
  constructor(
    private readonly oidc: OidcClient,
    private readonly flows: SsoFlows,
    private readonly sessions: ConsoleSessions,
    private readonly personalTokens: PersonalTokens,
    private readonly audit: AuditLog,
    private readonly logger: AppLogger,
  ) {}

  /** Sends the browser to the provider; `return` is where the console goes afterwards (a path under /console/). */
  @Get('start')
  async start(@Query('return') returnTo: unknown, @Req() req: Request, @Res() res: Response) {
    try {
      if (!this.oidc.configured) throw notConfigured();
      const flow = {
        ...(await this.oidc.flowSecrets()),
        returnTo: consolePath(returnTo),
        redirectUrl:
          this.oidc.configured.redirectUrl ?? `${req.protocol}://${req.get('host')}${CALLBACK_PATH}`,
      };
      const target = await this.oidc.authorizationUrl(flow);
      const id = await this.flows.begin(flow);
      // Lax, for this cookie alone: the provider's redirect back is a cross-site top-level GET, which a Strict
      // cookie would not come with.
      res.cookie(SSO_FLOW_COOKIE, id, {
        httpOnly: true,
        sameSite: 'lax',
        secure: req.secure,
        path: FLOW_COOKIE_PATH,
        maxAge: SSO_FLOW_TTL_SECONDS * 1000,
      });
      res.setHeader('cache-control', 'no-store');
      res.redirect(302, target.href);
    } catch (error) {
      refuse(req, res, error);
    }
  }

  /** The provider's answer: checked, exchanged, and a session opened for a person with at least one role. */
  @Get('callback')
  async callback(@Req() req: Request, @Res() res: Response) {
    try {
      const oidc = this.oidc.configured;
      if (!oidc) throw notConfigured();
      const id = req.headers.cookie ? parseCookies(req.headers.cookie)[SSO_FLOW_COOKIE] : undefined;
      res.clearCookie(SSO_FLOW_COOKIE, {
        httpOnly: true,
        sameSite: 'lax',
        secure: req.secure,
        path: FLOW_COOKIE_PATH,
      });
      const flow = id ? await this.flows.take(id) : null;
      if (!flow) {
        this.logger.pino.warn(
          { reason: id ? 'the flow is unknown: expired or used already' : 'no flow cookie' },
          SIGN_IN_REFUSED,
        );
        throw new GatewayException(
          'sso_failed',
          'This sign-in expired, was finished already, or was started in another browser; sign in again.',
        );
      }
      const callbackUrl = new URL(flow.redirectUrl);
      callbackUrl.search = new URL(req.originalUrl, 'http://callback').search;
      const claims = await this.oidc.signedIn(callbackUrl, flow);
      const person = personOf(claims);
      const roles = rolesOf(claims, oidc);
      // What this sign-in says of the person is what their personal tokens act with from now on: a group taken
      // away in the provider reaches their tokens here, a sign-in refused for having no role included.
      await this.personalTokens.rememberSignIn(person, roles);
      if (roles.length === 0) {
        this.logger.pino.warn({ reason: noRoleReason(claims, oidc) }, SIGN_IN_REFUSED);
        throw new GatewayException(
          'permission_denied',
          `${person.email ?? person.subject} has no role in this console: none of their groups (the ID token's "${oidc.groupsClaim}" claim) is in auth.oidc.groupRoles.`,
        );
      }
      const { id: sessionId, session } = await this.sessions.open(person.email ?? person.subject, {
        person,
        roles,
      });
      setSessionCookie(req, res, sessionId, this.sessions.ttlSeconds);
      await this.audit.write(
        { actor: `console:${session.actor}`, ip: req.ip, requestId: req.exchange.requestId },
        'console.sign_in',
        session.actor,
        { via: 'sso', ...person, roles: roles.map(formatRole) },
      );
      res.redirect(302, flow.returnTo);
    } catch (error) {
      refuse(req, res, error);
    }
  }
}

function notConfigured(): GatewayException {
  return new GatewayException('not_found', 'Single sign-on is not configured (auth.oidc).');
}

/** A path under /console/ (never another origin or place: no scheme, no `..`, no backslash), or the console's home. */
function consolePath(value: unknown): string {
  return typeof value === 'string' && /^\/console\/[^\\\s]*$/.test(value) && !value.includes('..')
    ? value
    : '/console/';
}
