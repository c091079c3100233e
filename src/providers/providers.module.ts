import { Inject, Module, type OnApplicationShutdown } from '@nestjs/common';
import { GatewayConfig, type BackendConfig } from '../config/config.schema';
import { AnthropicAdapter } from './anthropic/anthropic.adapter';
import { GeminiAdapter } from './gemini/gemini.adapter';
import { AppLogger } from '../common/logging/logger';
import { LocalAdapter } from './local/local.adapter';
import { LocalModelClient } from './local/local-model.client';
import { OpenAIAdapter } from './openai/openai.adapter';
import { BACKENDS, type Backend, type ProviderAdapter } from './provider-adapter';
import { UpstreamClient } from './shared/upstream-client';

/** Backend `type` -> adapter factory. The only place that knows the families by name. */
const ADAPTER_FACTORIES: Record<BackendConfig['type'], (id: string, config: BackendConfig) => ProviderAdapter> = {
  openai: (id, config) => new OpenAIAdapter(id, config),
  anthropic: (id, config) => new AnthropicAdapter(id, config),
  gemini: (id, config) => new GeminiAdapter(id, config),
  // The local worker speaks OpenAI's format, so the OpenAI adapter translates for it (plus what it cannot do).
  local: (id, config) => new LocalAdapter(id, config, 'local'),
};

function buildBackends(config: GatewayConfig, logger: AppLogger): Map<string, Backend> {
  const log = (message: string) => logger.pino.info(message);
  const backends = new Map<string, Backend>();
  for (const [id, backendConfig] of Object.entries(config.backends)) {
    const unavailable = missingKey(id, backendConfig);
    if (unavailable) logger.pino.warn({ backend: id }, `${unavailable}: its models are not listed and answer 503 model_unavailable`);
    backends.set(id, {
      id,
      adapter: ADAPTER_FACTORIES[backendConfig.type](id, backendConfig),
      client: backendConfig.type === 'local' ? new LocalModelClient(id, backendConfig.local, log) : new UpstreamClient(id, backendConfig),
      unavailable,
    });
  }
  return backends;
}

/** Vendors need a key; servers on plain http (Ollama, vLLM in a private network) and local models do not. */
function keyRequired(config: BackendConfig): boolean {
  if (config.apiKeyRequired !== undefined) return config.apiKeyRequired;
  if (config.type === 'local') return false;
  if (config.type === 'openai') return config.baseUrl.startsWith('https:');
  return true;
}

function missingKey(id: string, config: BackendConfig): string | undefined {
  if (!keyRequired(config) || config.apiKey) return undefined;
  const where = config.apiKeyEnv ? `set ${config.apiKeyEnv}` : `set backends.${id}.apiKey`;
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
