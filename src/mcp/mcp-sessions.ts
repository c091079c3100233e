import { createHash, randomBytes } from 'node:crypto';
import { Inject, Injectable } from '@nestjs/common';
import { AppLogger } from '../common/logging/logger';
import type { Principal } from '../auth/principal';
import { MCP_SESSION_RECORDS, type McpSessionRecords } from './mcp-session-records.repository';

/** A session lives this long after its last use (sliding): a day, as an agent's working session may. */
export const SESSION_TTL_SECONDS = 24 * 3600;
/**
 * The most sessions one token holds at once: opening one more ends the one used longest ago (renewed least recently),
 * so a client that initializes in a loop cannot fill the store (a day's TTL would otherwise keep every one).
 */
export const MAX_SESSIONS_PER_TOKEN = 100;
/** Its TTL is renewed by a request at most this often, so a busy session costs no write per request. */
const REFRESH_AFTER_MS = 10 * 60 * 1000;
/** What an `Mcp-Session-Id` may be (the spec: visible ASCII); anything else is no session of the gateway's. */
const SESSION_ID = /^[\x21-\x7e]{1,128}$/;
/** How often a store outage is logged (it would otherwise be logged by every request). */
const OUTAGE_LOG_EVERY_MS = 10_000;

/** Where a session was opened and by whom: it is used by that token, on that route, only. */
interface SessionRecord {
  tokenId: string;
  /** `/mcp` or `/mcp/<server>`. */
  route: string;
  /** When its TTL was last renewed (ms). */
  refreshedAt: number;
}

/**
 * What a request's session is: `valid` (issued to this token on this route, not ended or expired), `unknown` (the
 * client must initialize again: 404), or `unchecked` (the store is unreachable: the request is served without it).
 */
export type SessionState = 'valid' | 'unknown' | 'unchecked';

/**
 * The `Mcp-Session-Id` sessions of the 2025 revisions (docs/mcp.md, sessions and replicas). A session holds no state
 * of the exchange (every request is still served on its own, by any replica): it is the spec's handle a client
 * keeps from `initialize` to its end, bound to the token and route that opened it, so another token or route cannot
 * use it, and ended by DELETE. Kept in Redis under the SHA-256 of its id (a dump of the store holds no usable id),
 * with a sliding TTL. Redis unreachable: no session is issued and none checked (the token still is, by the auth
 * guard), and the outage is logged. A token holds at most MAX_SESSIONS_PER_TOKEN sessions. A revoked or deleted
 * token's sessions are not deleted: they grant nothing (the token is checked on every request) and expire.
 */
@Injectable()
export class McpSessions {
  private lastOutageLog = 0;

  constructor(
    @Inject(MCP_SESSION_RECORDS) private readonly records: McpSessionRecords,
    private readonly logger: AppLogger,
  ) {}

  /** A new session for the caller on `route`: its id, or undefined when the store cannot keep it. */
  async open(principal: Principal, route: string): Promise<string | undefined> {
    if (!this.records.available()) return this.outage(undefined, undefined);
    const id = randomBytes(32).toString('base64url');
    const record: SessionRecord = { tokenId: principal.tokenId, route, refreshedAt: Date.now() };
    try {
      await this.records.save(principal.tokenId, digestOf(id), JSON.stringify(record), {
        nowMs: record.refreshedAt,
        ttlSeconds: SESSION_TTL_SECONDS,
        maxPerToken: MAX_SESSIONS_PER_TOKEN,
      });
      return id;
    } catch (error) {
      return this.outage(error, undefined);
    }
  }

  /** The state of session `id` for the caller on `route`; a valid one's TTL is renewed when it is due. */
  async check(id: string, principal: Principal, route: string): Promise<SessionState> {
    if (!SESSION_ID.test(id)) return 'unknown';
    if (!this.records.available()) return this.outage(undefined, 'unchecked');
    try {
      const record = await this.find(id, principal);
      if (!record || record.tokenId !== principal.tokenId || record.route !== route) return 'unknown';
      if (Date.now() - record.refreshedAt >= REFRESH_AFTER_MS) {
        const renewed: SessionRecord = { ...record, refreshedAt: Date.now() };
        await this.records.refresh(principal.tokenId, digestOf(id), JSON.stringify(renewed), {
          nowMs: renewed.refreshedAt,
          ttlSeconds: SESSION_TTL_SECONDS,
        });
      }
      return 'valid';
    } catch (error) {
      return this.outage(error, 'unchecked');
    }
  }

  /** Ends session `id` if it is the caller's on `route` (`valid`); `unknown` if not; `unchecked`: not ended. */
  async end(id: string, principal: Principal, route: string): Promise<SessionState> {
    if (!SESSION_ID.test(id)) return 'unknown';
    if (!this.records.available()) return this.outage(undefined, 'unchecked');
    try {
      const record = await this.find(id, principal);
      if (!record || record.tokenId !== principal.tokenId || record.route !== route) return 'unknown';
      await this.records.remove(principal.tokenId, digestOf(id));
      return 'valid';
    } catch (error) {
      return this.outage(error, 'unchecked');
    }
  }

  /** The caller's session `id` (sessions are kept per token: another token's id is not found). */
  private async find(id: string, principal: Principal): Promise<SessionRecord | null> {
    const stored = await this.records.find(principal.tokenId, digestOf(id), {
      nowMs: Date.now(),
      ttlSeconds: SESSION_TTL_SECONDS,
    });
    return stored ? (JSON.parse(stored) as SessionRecord) : null;
  }

  private outage<T>(error: unknown, answer: T): T {
    if (Date.now() - this.lastOutageLog > OUTAGE_LOG_EVERY_MS) {
      this.lastOutageLog = Date.now();
      this.logger.pino.warn(
        { err: error },
        'redis unreachable: MCP sessions are neither issued nor checked (requests are served without them)',
      );
    }
    return answer;
  }
}

function digestOf(id: string): string {
  return createHash('sha256').update(id).digest('hex');
}
