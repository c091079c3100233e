import { anthropicFamily } from './anthropic/anthropic.family';
import { azureFamily } from './azure/azure.family';
import { bedrockFamily } from './bedrock/bedrock.family';
import { geminiFamily } from './gemini/gemini.family';
import { localFamily } from './local/local.family';
import { openaiFamily } from './openai/openai.family';
import { vertexFamily } from './vertex/vertex.family';
import type { ProviderFamily } from './provider-family';

/**
 * Every backend family: the one place that names them (each describes itself in its own folder). The entry points
 * hand this list to the config loader (main.ts, cli/main.ts), which validates each backend with its family's config
 * class, so each family's `create*` gets its own config class.
 */
export const FAMILIES: readonly ProviderFamily[] = [
  openaiFamily,
  anthropicFamily,
  geminiFamily,
  localFamily,
  azureFamily,
  vertexFamily,
  bedrockFamily,
];

export const FAMILY_BY_TYPE: ReadonlyMap<string, ProviderFamily> = new Map(
  FAMILIES.map((family) => [family.type, family]),
);
