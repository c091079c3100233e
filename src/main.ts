import 'reflect-metadata';
import { ConfigError, loadConfig } from './config/config.loader';
import { FAMILIES } from './providers/families';
import { startGateway } from './bootstrap';
import { assertRedisReachable, RedisUnreachableError } from './redis/redis-preflight';
import { heapGrowth } from './lifecycle/heap-growth';

async function main(): Promise<void> {
  heapGrowth.apply();
  heapGrowth.watchFullCollections();
  let config;
  try {
    config = loadConfig(FAMILIES);
  } catch (error) {
    if (error instanceof ConfigError) {
      process.stderr.write(`switchyard: ${error.message}\n`);
      process.exit(78); // EX_CONFIG
    }
    throw error;
  }
  try {
    // A single server is probed at boot; a cluster or sentinel client finds its nodes itself (and logs while it cannot).
    if (!config.redis.cluster && !config.redis.sentinel) await assertRedisReachable(config.redis.url);
  } catch (error) {
    if (error instanceof RedisUnreachableError) {
      process.stderr.write(`switchyard: ${error.message}\n`);
      process.exit(69); // EX_UNAVAILABLE
    }
    throw error;
  }
  const gateway = await startGateway(config);
  let stopping = false;
  for (const signal of ['SIGTERM', 'SIGINT'] as const) {
    process.on(signal, () => {
      if (stopping) return;
      stopping = true;
      gateway.shutdown().then(
        () => process.exit(0),
        (error: unknown) => {
          process.stderr.write(`switchyard: shutdown failed: ${String(error)}\n`);
          process.exit(1);
        },
      );
    });
  }
}

main().catch((error: unknown) => {
  process.stderr.write(
    `switchyard: failed to start: ${error instanceof Error ? error.message : String(error)}\n`,
  );
  process.exit(1);
});
