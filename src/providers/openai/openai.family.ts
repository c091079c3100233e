import type { ProviderFamily } from '../provider-family';
import { UpstreamClient } from '../upstream-client';
import { OpenAIAdapter } from './openai.adapter';
import { OpenAIBackendConfig } from './openai.config';

/** Any OpenAI-compatible server: OpenAI itself, vLLM, SGLang, llama.cpp, Ollama, Groq, DeepSeek, ... */
export const openaiFamily: ProviderFamily<OpenAIBackendConfig> = {
  type: 'openai',
  config: OpenAIBackendConfig,
  priceProvider: 'openai',
  embeddings: true,
  thinking: ['none', 'reasoning_effort', 'chat_template_kwargs'],
  // Vendors are on https; a server on plain http is on a private network (Ollama, vLLM) and usually keyless.
  keyRequired: (config) => config.baseUrl.startsWith('https:'),
  createAdapter: (id, config) => new OpenAIAdapter(id, config),
  createClient: (id, config) => new UpstreamClient(id, config),
};
