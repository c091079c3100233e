import 'reflect-metadata';
import { ConfigError, loadConfig } from './config/config.loader';
import { startGateway } from './bootstrap';
import { gatewayCpus, pinThisProcess } from './providers/local/cpu-placement';

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
  // Local workers pinned to inference CPUs: the gateway keeps to the others (here, not in startGateway, so tests
  // that run the gateway inside the test process leave that process alone).
  const cpus = gatewayCpus(Object.values(config.backends));
  const pinFailure = cpus ? pinThisProcess(cpus) : undefined;
  const gateway = await startGateway(config);
  if (cpus) gateway.logger.pino.info({ cpus, pinned: !pinFailure, pinFailure }, 'gateway CPUs: those not used for local inference');
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
