import { Inject, Injectable } from '@nestjs/common';
import { randomBytes, timingSafeEqual } from 'node:crypto';
import { parse as parseCookies } from 'cookie';
import type { Request } from 'express';
import type { Person, Role } from '../access/roles';
import { GatewayConfig } from '../config/config.schema';
import { hashToken } from './token-format';
import { CONSOLE_SESSION_RECORDS, type ConsoleSessionRecords } from './console-session-records.repository';

/** The cookie that carries a console sign-in. HttpOnly: the page's scripts never see it. */
export const CONSOLE_COOKIE = 'sy_console';

/** The header a console change must carry: the session's CSRF token, which only our own page can read. */
export const CSRF_HEADER = 'x-csrf-token';

export interface ConsoleSession {
  /** Who signed in (the name they gave, or the person's email or subject): the audit trail's actor is `console:<actor>`. */
  actor: string;
  csrf: string;
  expiresAt: string;
  /** The person, for a sign-in through the identity provider; absent for an admin-key sign-in. */
  person?: Person;
  /** What the session may do; absent for an admin-key sign-in, which may do everything (BREAK_GLASS_ROLES). */
  roles?: Role[];
}

/**
 * Console sign-ins: the admin key is exchanged once for a random session id that lives in an HttpOnly,
 * SameSite=Strict cookie (the key itself never stays in the browser). The store (Redis) keeps the session under
 * the SHA-256 of its id, with a TTL, so every replica knows it and a leaked Redis dump holds no usable cookie.
 */
@Injectable()
export class ConsoleSessions {
  constructor(
    @Inject(CONSOLE_SESSION_RECORDS) private readonly sessions: ConsoleSessionRecords,
    private readonly config: GatewayConfig,
  ) {}

  get ttlSeconds(): number {
    return this.config.console.sessionTtlSeconds;
  }

  /** A new session: an admin-key sign-in (`actor` only), or a person's with the roles they signed in with. */
  async open(
    actor: string,
    identity?: { person: Person; roles: Role[] },
  ): Promise<{ id: string; session: ConsoleSession }> {
    const id = randomBytes(32).toString('base64url');
    const session: ConsoleSession = {
      actor,
      csrf: randomBytes(32).toString('base64url'),
      expiresAt: new Date(Date.now() + this.ttlSeconds * 1000).toISOString(),
      ...(identity ? { person: identity.person, roles: identity.roles } : {}),
    };
    await this.sessions.save(hashToken(id), JSON.stringify(session), this.ttlSeconds);
    return { id, session };
  }

  /** The session the request's cookie names, or null (no cookie, unknown or expired). */
  async of(req: Request): Promise<ConsoleSession | null> {
    const id = sessionIdOf(req);
    if (!id) return null;
    const stored = await this.sessions.find(hashToken(id));
    return stored ? (JSON.parse(stored) as ConsoleSession) : null;
  }

  async close(req: Request): Promise<void> {
    const id = sessionIdOf(req);
    if (id) await this.sessions.remove(hashToken(id));
  }
}

export function sessionIdOf(req: Request): string | undefined {
  const header = req.headers.cookie;
  return header ? parseCookies(header)[CONSOLE_COOKIE] || undefined : undefined;
}

/** The request carries the session's CSRF token (compared in constant time). */
export function carriesCsrfToken(req: Request, session: ConsoleSession): boolean {
  const sent = req.headers[CSRF_HEADER];
  if (typeof sent !== 'string') return false;
  const [a, b] = [Buffer.from(sent), Buffer.from(session.csrf)];
  return a.length === b.length && timingSafeEqual(a, b);
}
