import 'reflect-metadata';
import { ConfigError, loadConfig } from './config/config.loader';
import { startGateway } from './bootstrap';

async function main(): Promise<void> {
  let config;
  try {
    config = loadConfig();
  } catch (error) {
    if (error instanceof ConfigError) {
      process.stderr.write(`switchyard: ${error.message}\n`);
      process.exit(78); // EX_CONFIG
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
  process.stderr.write(`switchyard: failed to start: ${error instanceof Error ? error.message : String(error)}\n`);
  process.exit(1);
});
