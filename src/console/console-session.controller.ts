import { Body, Controller, Delete, Get, HttpCode, Post, Req, Res } from '@nestjs/common';
import type { Request, Response } from 'express';
import { AuditLog } from '../audit/audit.log';
import { AdminActors } from '../auth/admin-actors';
import { AdminKeyThrottle } from '../auth/admin-key-throttle';
import { carriesCsrfToken, CONSOLE_COOKIE, ConsoleSessions } from '../auth/console-sessions';
import { GatewayConfig } from '../config/config.schema';
import { Public } from '../auth/route-access.decorators';
import { GatewayException } from '../core/errors/gateway.exception';
import { GatewayValidationPipe } from '../common/validation/validation.pipe';
import { ConsoleSignInDto } from './console.dto';
import { sessionView, setSessionCookie } from './console-session-cookie';

const strict = new GatewayValidationPipe({ strict: true });

/**
 * The console's sign-in, the only endpoints the console has of its own: everything it shows or changes goes
 * through the documented admin API, with the session cookie instead of the admin key.
 */
@Public()
@Controller('console/api/session')
export class ConsoleSessionController {
  constructor(
    private readonly sessions: ConsoleSessions,
    private readonly audit: AuditLog,
    private readonly adminKeys: AdminKeyThrottle,
    private readonly actors: AdminActors,
    config: GatewayConfig,
  ) {
    this.adminKeySignIn = config.console.adminKeySignIn;
    this.sso = config.auth.oidc !== undefined;
  }

  private readonly adminKeySignIn: boolean;
  private readonly sso: boolean;

  /** How one may sign in here, for the sign-in page: the admin key (unless turned off), SSO (when configured). */
  @Get('options')
  options() {
    return { object: 'console.sign_in_options', admin_key: this.adminKeySignIn, sso: this.sso };
  }

  /**
   * Exchanges the admin key for a session cookie; answers the CSRF token the page must send with changes. Wrong
   * keys count against the client's address together with the admin API's (admin-key-throttle.ts).
   */
  @Post()
  @HttpCode(201)
  async signIn(
    @Body(strict) body: ConsoleSignInDto,
    @Req() req: Request,
    @Res({ passthrough: true }) res: Response,
  ) {
    if (!this.adminKeySignIn)
      throw new GatewayException(
        'permission_denied',
        'The admin-key sign-in is turned off (console.adminKeySignIn); sign in with SSO.',
      );
    await this.adminKeys.verify(body.adminKey, req.ip, 'console_sign_in');
    const { id, session } = await this.sessions.open(body.name);
    setSessionCookie(req, res, id, this.sessions.ttlSeconds);
    await this.audit.write(
      { actor: `console:${session.actor}`, ip: req.ip, requestId: req.exchange.requestId },
      'console.sign_in',
      session.actor,
    );
    return sessionView(session);
  }

  /**
   * Who is signed in (and the CSRF token again, for a reloaded page); 401 without a live session. The roles are
   * those the admin API holds the session to now (a person's granted memberships too, read as every admin call
   * reads them), so the page shows what they allow.
   */
  @Get()
  async current(@Req() req: Request, @Res({ passthrough: true }) res: Response) {
    const session = await this.sessions.of(req);
    if (!session) throw new GatewayException('invalid_api_key', 'Not signed in.');
    const { roles } = await this.actors.ofSession(session);
    res.setHeader('cache-control', 'no-store');
    return sessionView(session, roles);
  }

  @Delete()
  async signOut(@Req() req: Request, @Res({ passthrough: true }) res: Response) {
    const session = await this.sessions.of(req);
    if (session && !carriesCsrfToken(req, session))
      throw new GatewayException(
        'csrf_token_invalid',
        "Signing out must carry the session's X-CSRF-Token header.",
      );
    await this.sessions.close(req);
    res.clearCookie(CONSOLE_COOKIE, { httpOnly: true, sameSite: 'strict', secure: req.secure, path: '/' });
    if (session)
      await this.audit.write(
        { actor: `console:${session.actor}`, ip: req.ip, requestId: req.exchange.requestId },
        'console.sign_out',
        session.actor,
      );
    return { signed_out: true };
  }
}
