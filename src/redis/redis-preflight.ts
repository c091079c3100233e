import Redis from 'ioredis';

/** Redis could not be reached at boot: one line for the operator, not a stack trace. */
export class RedisUnreachableError extends Error {
  constructor(url: string, reason: string) {
    super(
      `cannot reach Redis at ${redactUrl(url)} (${reason}). Start it (e.g. "redis-server --daemonize yes") ` +
        `or point REDIS_URL (redis.url in the config) at a running Redis.`,
    );
    this.name = 'RedisUnreachableError';
  }
}

/**
 * One connection attempt and a PING before the gateway starts. Without it, a gateway started with no Redis
 * came up half-working and printed a stack trace per failed boot command; an operator wants one line naming
 * the URL and what to do, and a non-zero exit so a supervisor notices.
 */
export async function assertRedisReachable(url: string, timeoutMs = 3000): Promise<void> {
  const probe = new Redis(url, {
    lazyConnect: true,
    connectTimeout: timeoutMs,
    commandTimeout: timeoutMs,
    maxRetriesPerRequest: 0,
    enableOfflineQueue: false,
    retryStrategy: () => null,
  });
  let lastError: Error | undefined;
  probe.on('error', (error: Error) => (lastError = error));
  try {
    await probe.connect();
    await probe.ping();
  } catch (error) {
    const cause = lastError ?? (error as Error);
    throw new RedisUnreachableError(url, cause.message || String(cause));
  } finally {
    probe.disconnect();
  }
}

/** The URL without its password (redis://user:secret@host -> redis://user:***@host). */
export function redactUrl(url: string): string {
  try {
    const parsed = new URL(url);
    if (parsed.password) parsed.password = '***';
    return parsed.toString().replace(/\/$/, '');
  } catch {
    return '(unparseable URL)';
  }
}
