import { Global, Inject, Module, type OnApplicationShutdown } from '@nestjs/common';
import Redis, { Cluster, type RedisOptions } from 'ioredis';
import { AppLogger } from '../common/logging/logger';
import { GatewayConfig } from '../config/config.schema';
import { redactUrl } from './redis-preflight';
import { RedisKeys } from './redis-keys';

export const REDIS = Symbol('REDIS');
export const REDIS_SUBSCRIBER = Symbol('REDIS_SUBSCRIBER');
/** The usage writer's own connection: its WAIT for replicas blocks a connection, and must never block admissions. */
export const REDIS_USAGE = Symbol('REDIS_USAGE');

/**
 * One connection to the configured topology: a server (`redis.url`), a Cluster (`redis.cluster`) or a
 * Sentinel-managed master (`redis.sentinel`). A Cluster client answers the same commands and scripts, so it is
 * typed as the one-server client: every key a command or script touches shares one team's hash tag (or is a
 * single global key), and batches are auto-pipelined per node rather than sent as one multi-slot pipeline. The
 * connections are given only to repositories (`*.repository.ts`, each owning its keys and Lua scripts); services
 * take a repository's interface.
 */
function connect(
  config: GatewayConfig,
  logger: AppLogger,
  role: 'commands' | 'subscriber' | 'usage',
  autoPipelining = false,
): Redis {
  const { redis: settings } = config;
  const options: RedisOptions = {
    enableAutoPipelining: autoPipelining,
    // Fail a command fast when Redis is down instead of queueing it forever.
    maxRetriesPerRequest: 1,
    enableOfflineQueue: true,
    connectTimeout: 2000,
    commandTimeout: settings.commandTimeoutMs,
    lazyConnect: false,
  };
  const auth: RedisOptions = {
    username: settings.username,
    password: settings.password,
    ...(settings.tls ? { tls: {} } : {}),
  };
  let redis: Redis;
  if (settings.cluster) {
    // Auto-pipelined per node, scripts included (they are plain EVALSHA calls on a Cluster: lua-script.ts). WAIT and
    // ROLE have no key, so ioredis could not place them: the usage writer sends them to each master itself.
    redis = new Cluster(settings.cluster.nodes.map(hostPort), {
      redisOptions: { ...options, ...auth, enableAutoPipelining: false },
      enableAutoPipelining: autoPipelining,
      autoPipeliningIgnoredCommands: ['wait', 'role'],
      enableOfflineQueue: true,
    }) as unknown as Redis;
  } else if (settings.sentinel) {
    const { sentinels, name, sentinelPassword } = settings.sentinel;
    redis = new Redis({
      ...options,
      ...auth,
      sentinels: sentinels.map(hostPort),
      name,
      sentinelPassword,
      ...(settings.tls ? { sentinelTLS: {}, enableTLSForSentinelMode: true } : {}),
    });
  } else redis = new Redis(settings.url, options);
  logConnectionStates(redis, logger, role, describeTopology(config));
  return redis;
}

function hostPort(node: string): { host: string; port: number } {
  const at = node.lastIndexOf(':');
  return { host: node.slice(0, at), port: Number(node.slice(at + 1)) };
}

/** What the logs name as "the Redis": the URL without its password, or the cluster's or sentinel's nodes. */
export function describeTopology(config: GatewayConfig): string {
  if (config.redis.cluster) return `cluster ${config.redis.cluster.nodes.join(',')}`;
  if (config.redis.sentinel)
    return `sentinel ${config.redis.sentinel.name}@${config.redis.sentinel.sentinels.join(',')}`;
  return redactUrl(config.redis.url);
}

/**
 * One structured log line per change of the connection's state (lost, back), not one per failed reconnect:
 * without an 'error' listener ioredis prints "[ioredis] Unhandled error event" with a stack trace to stderr
 * for every attempt (26 lines in a 5 s outage), none of it JSON.
 */
function logConnectionStates(redis: Redis, logger: AppLogger, role: string, where: string): void {
  let down: string | undefined;
  redis.on('error', (error: Error & { code?: string }) => {
    if (down !== undefined) return; // still the same outage
    const reason = error.code ?? error.message;
    down = reason;
    logger.pino.warn({ redis: where, connection: role, reason }, 'redis connection lost; reconnecting');
  });
  redis.on('ready', () => {
    if (down === undefined) return;
    down = undefined;
    logger.pino.info({ redis: where, connection: role }, 'redis connection restored');
  });
}

/**
 * False while the connection is down. The hot path checks this first so that an
 * outage costs a request nothing instead of a command timeout.
 */
export function redisReady(redis: Redis): boolean {
  return redis.status === 'ready';
}

/** One command connection, one for the usage writer and one subscriber connection (pub/sub needs its own). */
@Global()
@Module({
  providers: [
    // Commands issued in the same event-loop turn (concurrent admissions, usage batches) share one socket write:
    // each write is a syscall, and they were ~5% of a request's CPU at 32 concurrent requests.
    {
      provide: REDIS,
      inject: [GatewayConfig, AppLogger],
      useFactory: (c: GatewayConfig, l: AppLogger) => connect(c, l, 'commands', true),
    },
    {
      provide: REDIS_USAGE,
      inject: [GatewayConfig, AppLogger],
      useFactory: (c: GatewayConfig, l: AppLogger) => connect(c, l, 'usage', true),
    },
    {
      provide: REDIS_SUBSCRIBER,
      inject: [GatewayConfig, AppLogger],
      useFactory: (c: GatewayConfig, l: AppLogger) => connect(c, l, 'subscriber'),
    },
    {
      provide: RedisKeys,
      inject: [GatewayConfig],
      useFactory: (c: GatewayConfig) => new RedisKeys(c.redis.keyPrefix),
    },
  ],
  exports: [REDIS, REDIS_USAGE, REDIS_SUBSCRIBER, RedisKeys],
})
export class RedisModule implements OnApplicationShutdown {
  constructor(
    @Inject(REDIS) private readonly redis: Redis,
    @Inject(REDIS_USAGE) private readonly usage: Redis,
    @Inject(REDIS_SUBSCRIBER) private readonly subscriber: Redis,
  ) {}

  async onApplicationShutdown(): Promise<void> {
    await Promise.allSettled([this.redis.quit(), this.usage.quit(), this.subscriber.quit()]);
  }
}
