import type { ProviderFamily } from '../provider-family';
import { LocalAdapter } from './local.adapter';
import { LocalModelClient } from './local-model.client';
import { LocalFamilyConfig, localModelProblem } from './local.config';

/** A GGUF model in a worker process; it speaks OpenAI's format, so the OpenAI adapter (plus its limits) translates. */
export const localFamily: ProviderFamily<LocalFamilyConfig> = {
  type: 'local',
  config: LocalFamilyConfig,
  modelProblem: localModelProblem,
  // native: thinking as the GGUF's chat template allows (a thought budget if it has a thought section, else a 400).
  embeddings: true,
  thinking: ['none', 'native'],
  keyRequired: () => false,
  createAdapter: (id, config) => new LocalAdapter(id, config, 'local'),
  createClient: (id, config, log) => new LocalModelClient(id, config.local, log),
};
