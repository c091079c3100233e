import type { ProviderFamily } from '../provider-family';
import { UpstreamClient } from '../upstream-client';
import { AnthropicAdapter } from './anthropic.adapter';
import { AnthropicBackendConfig } from './anthropic.config';

/** Anthropic's Messages API. */
export const anthropicFamily: ProviderFamily<AnthropicBackendConfig> = {
  type: 'anthropic',
  config: AnthropicBackendConfig,
  priceProvider: 'anthropic',
  embeddings: false,
  thinking: ['none', 'native'],
  keyRequired: () => true,
  createAdapter: (id, config) => new AnthropicAdapter(id, config),
  createClient: (id, config) => new UpstreamClient(id, config),
};
