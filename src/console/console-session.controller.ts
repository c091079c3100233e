import { Body, Controller, Delete, Get, HttpCode, Post, Req, Res } from '@nestjs/common';
import type { Request, Response } from 'express';
import { AuditLog } from '../audit/audit.log';
import { carriesCsrfToken, CONSOLE_COOKIE, ConsoleSessions, type ConsoleSession } from '../auth/console-sessions';
import { Public } from '../auth/route-access.decorators';
import { matchesDigest, secretDigest } from '../auth/token-format';
import { GatewayException } from '../common/errors/gateway.exception';
import { GatewayValidationPipe } from '../common/validation/validation.pipe';
import { GatewayConfig } from '../config/config.schema';
import { ConsoleSignInDto } from './console.dto';

const strict = new GatewayValidationPipe({ strict: true });

/**
 * The console's sign-in, the only endpoints the console has of its own: everything it shows or changes goes
 * through the documented admin API, with the session cookie instead of the admin key.
 */
@Public()
@Controller('console/api/session')
export class ConsoleSessionController {
  private readonly adminKeyDigest: Buffer;

  constructor(
    private readonly sessions: ConsoleSessions,
    private readonly audit: AuditLog,
    config: GatewayConfig,
  ) {
    this.adminKeyDigest = secretDigest(config.admin.apiKey);
  }

  /** Exchanges the admin key for a session cookie; answers the CSRF token the page must send with changes. */
  @Post()
  @HttpCode(201)
  async signIn(@Body(strict) body: ConsoleSignInDto, @Req() req: Request, @Res({ passthrough: true }) res: Response) {
    const clientIp = req.ip ?? 'unknown';
    const retryAfter = await this.sessions.signInBlockedFor(clientIp);
    if (retryAfter !== null) {
      throw new GatewayException('rate_limit_exceeded', `Too many failed sign-ins from this address; try again in ${retryAfter} s.`, { headers: { 'retry-after': String(retryAfter) } });
    }
    if (!matchesDigest(body.adminKey, this.adminKeyDigest)) {
      await this.sessions.signInFailed(clientIp);
      throw new GatewayException('invalid_api_key', 'The admin key is not valid.');
    }
    const { id, session } = await this.sessions.open(body.name);
    res.cookie(CONSOLE_COOKIE, id, { httpOnly: true, sameSite: 'strict', secure: req.secure, path: '/', maxAge: this.sessions.ttlSeconds * 1000 });
    res.setHeader('cache-control', 'no-store');
    await this.audit.write({ actor: `console:${session.actor}`, ip: req.ip, requestId: req.ledger.requestId }, 'console.sign_in', session.actor);
    return sessionView(session);
  }

  /** Who is signed in (and the CSRF token again, for a reloaded page); 401 without a live session. */
  @Get()
  async current(@Req() req: Request, @Res({ passthrough: true }) res: Response) {
    const session = await this.sessions.of(req);
    if (!session) throw new GatewayException('invalid_api_key', 'Not signed in.');
    res.setHeader('cache-control', 'no-store');
    return sessionView(session);
  }

  @Delete()
  async signOut(@Req() req: Request, @Res({ passthrough: true }) res: Response) {
    const session = await this.sessions.of(req);
    if (session && !carriesCsrfToken(req, session)) throw new GatewayException('csrf_token_invalid', "Signing out must carry the session's X-CSRF-Token header.");
    await this.sessions.close(req);
    res.clearCookie(CONSOLE_COOKIE, { httpOnly: true, sameSite: 'strict', secure: req.secure, path: '/' });
    if (session) await this.audit.write({ actor: `console:${session.actor}`, ip: req.ip, requestId: req.ledger.requestId }, 'console.sign_out', session.actor);
    return { signed_out: true };
  }
}

function sessionView(session: ConsoleSession) {
  return { object: 'console.session', actor: session.actor, csrf_token: session.csrf, expires_at: session.expiresAt };
}
