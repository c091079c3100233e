import type { ProviderFamily } from '../provider-family';
import { UpstreamClient } from '../upstream-client';
import { AnthropicAdapter } from './anthropic.adapter';

/** Anthropic's Messages API. */
export const anthropicFamily: ProviderFamily = {
  type: 'anthropic',
  embeddings: false,
  thinking: ['none', 'native'],
  keyRequired: () => true,
  createAdapter: (id, config) => new AnthropicAdapter(id, config),
  createClient: (id, config) => new UpstreamClient(id, config),
};
