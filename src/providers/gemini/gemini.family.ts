import type { ProviderFamily } from '../provider-family';
import { UpstreamClient } from '../upstream-client';
import { GeminiAdapter } from './gemini.adapter';
import { BackendConfig } from '../../config/config.schema';

/** Google's Gemini API (generateContent, streamGenerateContent). */
export const geminiFamily: ProviderFamily = {
  type: 'gemini',
  config: BackendConfig, // no keys of its own
  priceProvider: 'google',
  embeddings: true,
  thinking: ['none', 'native'],
  keyRequired: () => true,
  createAdapter: (id, config) => new GeminiAdapter(id, config),
  createClient: (id, config) => new UpstreamClient(id, config),
};
