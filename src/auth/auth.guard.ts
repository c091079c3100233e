import { Injectable, type CanActivate, type ExecutionContext } from '@nestjs/common';
import { Reflector } from '@nestjs/core';
import type { Request } from 'express';
import { AdminAccess } from '../access/admin-access';
import { REQUIRES, type Requirement } from '../access/requires.decorator';
import type { AdminActor } from '../access/roles';
import { GatewayConfig } from '../config/config.schema';
import { GatewayException } from '../core/errors/gateway.exception';
import { AdminActors } from './admin-actors';
import { AdminKeyThrottle } from './admin-key-throttle';
import { CredentialCache } from './credential.cache';
import { PERSONAL_TOKEN_PREFIX } from './personal-token-format';
import { PersonalTokens } from './personal-tokens';
import { ROUTE_ACCESS, type RouteAccess } from './route-access.decorators';
import { bearerToken } from './token-format';
import { carriesCsrfToken, ConsoleSessions, sessionIdOf } from './console-sessions';

/**
 * The global guard. Default deny: a route without a marker needs a team token;
 * `@Public()` and `@AdminOnly()` are the only ways to say otherwise. An admin route takes the admin key, a
 * person's personal admin token (`sy_admin_...`, auth/personal-tokens.ts) or a console session. An admin call is then held to its route's
 * @Requires by the caller's roles (access/admin-access.ts), and its actor is put on the request for the audit.
 */
@Injectable()
export class AuthGuard implements CanActivate {
  private readonly consoleEnabled: boolean;

  constructor(
    private readonly reflector: Reflector,
    private readonly credentials: CredentialCache,
    private readonly consoleSessions: ConsoleSessions,
    private readonly adminKeys: AdminKeyThrottle,
    private readonly actors: AdminActors,
    private readonly access: AdminAccess,
    private readonly personalTokens: PersonalTokens,
    config: GatewayConfig,
  ) {
    this.consoleEnabled = config.console.enabled;
  }

  async canActivate(context: ExecutionContext): Promise<boolean> {
    const access =
      this.reflector.getAllAndOverride<RouteAccess | undefined>(ROUTE_ACCESS, [
        context.getHandler(),
        context.getClass(),
      ]) ?? 'team';
    if (access === 'public') return true;
    const req = context.switchToHttp().getRequest<Request>();
    // Team tokens also come in `x-api-key`: Anthropic's SDKs and Claude Code (ANTHROPIC_API_KEY) send them there.
    // The admin key only as a bearer token.
    const apiKey = access === 'team' ? req.headers['x-api-key'] : undefined;
    const token =
      bearerToken(req.headers.authorization) ?? (typeof apiKey === 'string' && apiKey ? apiKey : null);
    if (!token && access === 'admin' && this.consoleEnabled && sessionIdOf(req))
      return this.permitted(await this.consoleSignedIn(req), context, req);
    if (!token) throw new GatewayException('invalid_api_key', missingCredential(access, req));
    if (access === 'admin' && token.startsWith(PERSONAL_TOKEN_PREFIX) && !this.adminKeys.isAdminKey(token)) {
      // A person's own token, counted with wrong admin keys when wrong (the same guesser, the same lockout).
      const holder = await this.adminKeys.verifyPersonalToken(
        () => this.personalTokens.authenticate(token),
        req.ip,
      );
      return this.permitted(await this.actors.ofPersonalToken(holder), context, req);
    }
    if (access === 'admin') {
      // Wrong keys are counted per client address and throttled, with the console's sign-in (admin-key-throttle.ts).
      await this.adminKeys.verify(token, req.ip, 'admin_api');
      return this.permitted(this.actors.ofAdminKey(req), context, req);
    }
    req.exchange.authenticated(await this.credentials.authenticate(token));
    return true;
  }

  /**
   * The admin API called by the console: a live session cookie instead of the admin key, and for every change
   * (anything but GET/HEAD) the session's CSRF token in X-CSRF-Token. The cookie is SameSite=Strict already;
   * the token is the second lock, for browsers or proxies that do not honour it.
   */
  private async consoleSignedIn(req: Request): Promise<AdminActor> {
    const session = await this.consoleSessions.of(req);
    if (!session)
      throw new GatewayException(
        'invalid_api_key',
        'The console session has expired or was signed out; sign in again.',
      );
    if (req.method !== 'GET' && req.method !== 'HEAD' && !carriesCsrfToken(req, session)) {
      throw new GatewayException(
        'csrf_token_invalid',
        "A console change must carry the session's X-CSRF-Token header.",
      );
    }
    return this.actors.ofSession(session);
  }

  /** The route's @Requires, held against the actor's roles (403 permission_denied). */
  private async permitted(actor: AdminActor, context: ExecutionContext, req: Request): Promise<boolean> {
    const requirement = this.reflector.get<Requirement | undefined>(REQUIRES, context.getHandler());
    // Never undefined on a running gateway (declared-routes.ts refuses to start without it); denied if it were.
    if (!requirement) throw new GatewayException('permission_denied', 'This route declares no permission.');
    await this.access.check(actor, requirement, req);
    req.adminActor = actor;
    return true;
  }
}

/** The 401 for a request that carries no credential the route reads: where to put the one it takes. */
function missingCredential(access: 'admin' | 'team', req: Request): string {
  if (access === 'admin')
    // x-api-key is not read here (team tokens only), so it is not offered.
    return req.headers.authorization
      ? 'The Authorization header must be "Bearer <admin key>".'
      : 'Missing admin key: send "Authorization: Bearer <admin key>" (or your personal admin token in its place).';
  return req.headers.authorization
    ? 'The Authorization header must be "Bearer <token>".'
    : 'Missing bearer token: send "Authorization: Bearer <token>" (or "x-api-key: <token>").';
}
