import { Inject, Module, type OnApplicationShutdown } from '@nestjs/common';
import { GatewayConfig, type BackendConfig } from '../config/config.schema';
import { AppLogger } from '../common/logging/logger';
import { FAMILY_BY_TYPE } from './families';
import { BACKENDS, type Backend } from './provider-adapter';
import type { BackendLog, ProviderFamily } from './provider-family';

function buildBackends(config: GatewayConfig, logger: AppLogger): Map<string, Backend> {
  const backends = new Map<string, Backend>();
  for (const [id, backendConfig] of Object.entries(config.backends)) {
    const log: BackendLog = (message, level = 'info') => logger.pino[level]({ backend: id }, message);
    const family = FAMILY_BY_TYPE.get(backendConfig.type)!; // the config's `type` was validated against the list
    const unavailable = missingKey(id, backendConfig, family);
    if (unavailable)
      logger.pino.warn(
        { backend: id },
        `${unavailable}: its models are not listed and answer 403 model_unavailable`,
      );
    const client = family.createClient(id, backendConfig, log);
    // A client that knows up front it can never answer (a vertex credentials file that is missing or unusable) is
    // said at start like a missing key, not only in readiness and in each request's 403.
    const unusable = unavailable ? undefined : client.unusable?.();
    if (unusable)
      logger.pino.warn(
        { backend: id },
        `${unusable}: its models are not listed and answer 403 model_unavailable`,
      );
    backends.set(id, { id, adapter: family.createAdapter(id, backendConfig), client, unavailable });
  }
  return backends;
}

function missingKey(id: string, config: BackendConfig, family: ProviderFamily): string | undefined {
  const required = config.apiKeyRequired ?? family.keyRequired(config);
  if (!required || config.apiKey) return undefined;
  const where = config.apiKeyEnv
    ? `the gateway's operator must set ${config.apiKeyEnv}`
    : `the gateway's operator must set backends.${id}.apiKey`;
  return `backend "${id}" has no API key configured (${where})`;
}

@Module({
  providers: [{ provide: BACKENDS, inject: [GatewayConfig, AppLogger], useFactory: buildBackends }],
  exports: [BACKENDS],
})
export class ProvidersModule implements OnApplicationShutdown {
  constructor(@Inject(BACKENDS) private readonly backends: Map<string, Backend>) {}

  async onApplicationShutdown(): Promise<void> {
    await Promise.allSettled([...this.backends.values()].map((backend) => backend.client.close()));
  }
}
