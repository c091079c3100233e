import type { ProviderFamily } from '../provider-family';
import { AccessTokens } from './vertex-access-tokens';
import { tokenSourceFor } from './vertex-credentials';
import { publisherOf, upstreamModelProblem } from './vertex-paths';
import { VertexAdapter } from './vertex.adapter';
import { VertexClient } from './vertex.client';
import { VertexBackendConfig } from './vertex.config';

/**
 * One token source per backend, shared by its adapter (which scrubs the tokens from vendor messages) and its client
 * (which sends them); both are made from the same config object.
 */
const TOKENS = new WeakMap<VertexBackendConfig, AccessTokens>();

function tokensFor(config: VertexBackendConfig): AccessTokens {
  let tokens = TOKENS.get(config);
  if (!tokens) {
    const timeoutMs = Math.min(30_000, config.timeouts.firstByteMs);
    const { fetcher, problem } = tokenSourceFor(config.credentialsFile, process.env, timeoutMs);
    tokens = new AccessTokens(fetcher, Date.now, problem);
    TOKENS.set(config, tokens);
  }
  return tokens;
}

/** Google Vertex AI: Gemini and Claude models, and Google's text embeddings, with Google's OAuth. */
export const vertexFamily: ProviderFamily<VertexBackendConfig> = {
  type: 'vertex',
  config: VertexBackendConfig,
  // Google's prices in the data cover Vertex's Gemini and Claude ids; needed where baseUrl is not Google's own
  // host (a Private Service Connect endpoint, a proxy), which the data cannot recognise.
  priceProvider: 'google',
  embeddings: true,
  thinking: ['none', 'native'],
  keyRequired: () => false, // OAuth tokens from Application Default Credentials, not a key
  modelProblem(model, _backend, { upstreamModel: id }) {
    const problem = upstreamModelProblem(id);
    if (problem) return { key: 'upstreamModel', message: problem };
    if (model.kind === 'embedding' && publisherOf(id).publisher === 'anthropic')
      return {
        key: 'upstreamModel',
        message: `"${id}" is a Claude model; Vertex embeddings are Google's text embedding models`,
      };
    return undefined;
  },
  createAdapter: (id, config) => new VertexAdapter(id, config, tokensFor(config)),
  createClient: (id, config, log) => new VertexClient(id, config, tokensFor(config), log),
};
