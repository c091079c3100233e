import type { ProviderFamily } from '../provider-family';
import { BedrockAdapter } from './bedrock.adapter';
import { BedrockClient } from './bedrock-client';
import { BedrockBackendConfig } from './bedrock.config';

/** AWS Bedrock Runtime: Claude through InvokeModel (Messages), other chat models through Converse, embeddings. */
export const bedrockFamily: ProviderFamily<BedrockBackendConfig> = {
  type: 'bedrock',
  config: BedrockBackendConfig,
  // The price data's AWS entries (regional, cross-region and global ids; `regional.` prefix matched by the data).
  priceProvider: 'aws',
  embeddings: true,
  thinking: ['none', 'native'], // native: Claude's thinking (Converse models ignore it)
  // Signed with the AWS default credential chain when it has no `apiKey` (a Bedrock API key).
  keyRequired: () => false,
  createAdapter: (id, config) => new BedrockAdapter(id, config),
  createClient: (id, config, log) => new BedrockClient(id, config, log),
};
