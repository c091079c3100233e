import { Inject, Injectable } from '@nestjs/common';
import type { Logger } from 'pino';
import { GatewayException } from '../core/errors/gateway.exception';
import { AppLogger } from '../common/logging/logger';
import { GatewayConfig } from '../config/config.schema';
import { MetricsService } from '../metrics/metrics.service';
import { throttledAddress } from './client-address';
import type { FailureCounts } from './failure-counts';
import { matchesDigest, secretDigest } from './token-format';

/**
 * Where a credential was presented: the admin key on the admin API (a bearer token) or the console's sign-in
 * form, a personal admin token (`sy_admin_...`) on the admin API, or an ID token the CLI exchanges for one.
 */
export type AdminKeySurface = 'admin_api' | 'console_sign_in' | 'personal_token' | 'cli_sign_in';

/** Wrong admin keys allowed per client address per window; the next attempt is refused until the window ends. */
export const ADMIN_KEY_FAILURES_ALLOWED = 5;
export const ADMIN_KEY_FAILURE_WINDOW_SECONDS = 300;
/** The FailureCounts the throttle keeps its counts in (Redis, this process's own while Redis is down). */
export const ADMIN_KEY_FAILURE_COUNTS = Symbol('ADMIN_KEY_FAILURE_COUNTS');

/**
 * What a wrong key is told: the same words whatever was presented (a live team token, one merely shaped like one,
 * anything else), so the answer says what is wrong and tells nothing about the credential. The admin API's also
 * names the one thing it takes, since a team token is the usual mistake there.
 */
const WRONG_KEY: Record<AdminKeySurface, string> = {
  admin_api:
    'That is not the admin key. The admin API takes the admin key or a personal admin token, as "Authorization: Bearer <key>"; team tokens are not accepted here.',
  console_sign_in: 'The admin key is not valid.',
  personal_token: 'That is not a valid personal admin token.',
  cli_sign_in:
    "The identity provider's ID token could not be verified (or was used already); run `switchyard login` again.",
};

/** The error code of a wrong credential: the key's 401, or a refused SSO sign-in's. */
const WRONG_CODE: Record<AdminKeySurface, 'invalid_api_key' | 'sso_failed'> = {
  admin_api: 'invalid_api_key',
  console_sign_in: 'invalid_api_key',
  personal_token: 'invalid_api_key',
  cli_sign_in: 'sso_failed',
};

const WRONG_LOG: Record<AdminKeySurface, string> = {
  admin_api: 'wrong admin key',
  console_sign_in: 'wrong admin key',
  personal_token: 'wrong personal admin token',
  cli_sign_in: 'ID token refused at the CLI sign-in',
};

/** Once an address is blocked, one warn line per this many more wrong keys: the metric counts every one. */
const LOG_EVERY_WHILE_BLOCKED = 100;

/**
 * The one check of the admin key, wherever it is presented (the auth guard on /admin/v1, the console's sign-in),
 * with one count of wrong keys per client address (`req.ip`, which believes X-Forwarded-For only from
 * server.trustedProxies; IPv6 by its /64) shared by both, so neither is a way around the other's lockout.
 *
 * After ADMIN_KEY_FAILURES_ALLOWED wrong keys in a window, the address is refused (429 with Retry-After) until
 * the window ends, the right key included: were the right key let through, a blocked guesser would still tell
 * it from the wrong ones (200 against 429), and the block would slow nothing. The cost is that a guesser behind
 * the same address as an admin (a shared NAT) locks that admin out for up to a window; the warn log names it.
 *
 * The right key is only read against the count; wrong keys are counted atomically first and judged by their own
 * number, so guesses sent at once cannot slip past the count together: per window, at most the allowed number of
 * wrong keys are ever answered 401, and a right key is answered 200 only while fewer had been counted.
 */
@Injectable()
export class AdminKeyThrottle {
  private readonly adminKeyDigest: Buffer;
  private readonly log: Logger;
  /** When the refusal of a right key was last logged, per address: once per window is enough. */
  private readonly rightKeyRefusalLogged = new Map<string, number>();

  constructor(
    config: GatewayConfig,
    private readonly metrics: MetricsService,
    logger: AppLogger,
    @Inject(ADMIN_KEY_FAILURE_COUNTS) private readonly counts: FailureCounts,
  ) {
    this.adminKeyDigest = secretDigest(config.admin.apiKey);
    this.log = logger.pino;
  }

  /**
   * Returns when `presented` is the admin key and its address is not blocked; throws 401 `invalid_api_key` for
   * a wrong key, 429 `rate_limit_exceeded` from a blocked address. The key itself is never logged.
   */
  async verify(presented: string, clientIp: string | undefined, surface: AdminKeySurface): Promise<void> {
    await this.judge(matchesDigest(presented, this.adminKeyDigest) || null, clientIp, surface);
  }

  /** Whether `presented` is the admin key (no count): a key that happens to look like a personal token stays one. */
  isAdminKey(presented: string): boolean {
    return matchesDigest(presented, this.adminKeyDigest);
  }

  /**
   * The same count for a personal admin token: `check` answers its holder, or null for a wrong token (unknown,
   * or a wrong secret), which is counted like a wrong admin key; from a blocked address even a right one is
   * refused 429. What `check` throws (a revoked or expired token's own 401) goes through uncounted.
   */
  async verifyPersonalToken<T>(check: () => Promise<T | null>, clientIp: string | undefined): Promise<T> {
    return this.judge(await check(), clientIp, 'personal_token');
  }

  /**
   * The same count for an ID token the CLI exchanges for a personal token (`check` answers its claims, or null when
   * forged, expired, for another client or replayed), so an exchange is no way around the admin API's lockout.
   */
  async verifyIdToken<T>(check: () => Promise<T | null>, clientIp: string | undefined): Promise<T> {
    return this.judge(await check(), clientIp, 'cli_sign_in');
  }

  /** A right credential (`matched`) is let through unless its address is blocked; a wrong one is counted. */
  private async judge<T>(
    matched: T | null,
    clientIp: string | undefined,
    surface: AdminKeySurface,
  ): Promise<T> {
    const address = throttledAddress(clientIp);
    const where = {
      clientIp: clientIp ?? null,
      ...(address !== clientIp ? { countedAs: address } : {}),
      surface,
    };
    if (matched) {
      const { failures, resetInSeconds } = await this.counts.read(address);
      if (failures < ADMIN_KEY_FAILURES_ALLOWED) return matched;
      this.logRightKeyRefused(address, where, failures, resetInSeconds);
      throw refusal(resetInSeconds);
    }
    const { failures, resetInSeconds } = await this.counts.add(address);
    const blocked = failures > ADMIN_KEY_FAILURES_ALLOWED;
    this.metrics.adminAuthFailures.inc({ surface, outcome: blocked ? 'throttled' : 'rejected' });
    if (failures <= ADMIN_KEY_FAILURES_ALLOWED + 1 || failures % LOG_EVERY_WHILE_BLOCKED === 0) {
      const blocking =
        failures >= ADMIN_KEY_FAILURES_ALLOWED ? { blockedForSeconds: Math.max(1, resetInSeconds) } : {};
      this.log.warn({ ...where, failures, ...blocking }, WRONG_LOG[surface]);
    }
    if (blocked) throw refusal(resetInSeconds);
    throw new GatewayException(WRONG_CODE[surface], WRONG_KEY[surface]);
  }

  private logRightKeyRefused(
    address: string,
    where: Record<string, unknown>,
    failures: number,
    resetInSeconds: number,
  ): void {
    const now = Date.now();
    if ((this.rightKeyRefusalLogged.get(address) ?? 0) > now) return;
    if (this.rightKeyRefusalLogged.size >= 10_000) this.rightKeyRefusalLogged.clear();
    this.rightKeyRefusalLogged.set(address, now + resetInSeconds * 1000);
    this.log.warn(
      { ...where, failures, blockedForSeconds: Math.max(1, resetInSeconds) },
      'the right admin key was refused: its address is blocked for wrong keys',
    );
  }
}

function refusal(resetInSeconds: number): GatewayException {
  const retryAfter = Math.max(1, resetInSeconds);
  return new GatewayException(
    'rate_limit_exceeded',
    `Too many wrong admin keys or tokens from this address; try again in ${retryAfter} s.`,
    {
      headers: { 'retry-after': String(retryAfter) },
    },
  );
}
