import { anthropicFamily } from './anthropic/anthropic.family';
import { geminiFamily } from './gemini/gemini.family';
import { localFamily } from './local/local.family';
import { openaiFamily } from './openai/openai.family';
import type { ProviderFamily } from './provider-family';

/** Every backend family: the one place that names them (each describes itself in its own folder). */
export const FAMILIES = [
  openaiFamily,
  anthropicFamily,
  geminiFamily,
  localFamily,
] as const satisfies readonly ProviderFamily[];

export const FAMILY_BY_TYPE: ReadonlyMap<string, ProviderFamily> = new Map(
  FAMILIES.map((family) => [family.type, family]),
);
