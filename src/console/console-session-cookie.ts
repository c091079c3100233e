import type { Request, Response } from 'express';
import { BREAK_GLASS_ROLES, formatRole, type Role } from '../access/roles';
import { CONSOLE_COOKIE, type ConsoleSession } from '../auth/console-sessions';

/** The session cookie, the same for every way of signing in: HttpOnly, SameSite=Strict, as long as the session. */
export function setSessionCookie(req: Request, res: Response, id: string, ttlSeconds: number): void {
  res.cookie(CONSOLE_COOKIE, id, {
    httpOnly: true,
    sameSite: 'strict',
    secure: req.secure,
    path: '/',
    maxAge: ttlSeconds * 1000,
  });
  res.setHeader('cache-control', 'no-store');
}

/**
 * A session as the console's API shows it: who (the person, for an SSO sign-in) and with which roles: those it
 * was opened with, or (`roles` given) every role the admin API holds the session to now, granted memberships too.
 */
export function sessionView(
  session: ConsoleSession,
  roles: readonly Role[] = session.roles ?? BREAK_GLASS_ROLES,
) {
  return {
    object: 'console.session',
    actor: session.actor,
    person: session.person ?? null,
    roles: [...new Set(roles.map(formatRole))],
    csrf_token: session.csrf,
    expires_at: session.expiresAt,
  };
}
