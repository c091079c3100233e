import type { ProviderFamily } from '../provider-family';
import { AzureAdapter } from './azure.adapter';
import { AzureClient } from './azure.client';
import { AzureBackendConfig } from './azure.config';

/** Azure OpenAI (and Foundry resources' OpenAI endpoint): OpenAI's wire on Azure's paths, with Azure's auth. */
export const azureFamily: ProviderFamily<AzureBackendConfig> = {
  type: 'azure',
  config: AzureBackendConfig,
  priceProvider: 'azure',
  embeddings: true,
  thinking: ['none', 'reasoning_effort'],
  // A key, or Entra ID instead of one.
  keyRequired: (config) => !config.entra,
  createAdapter: (id, config) => new AzureAdapter(id, config),
  createClient: (id, config, log) => new AzureClient(id, config, log),
};
