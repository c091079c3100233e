/**
 * `gen_ai.provider.name` by the adapter's family (ProviderAdapter.family): the conventions' well-known values where
 * one fits. An `openai` backend may be any OpenAI-compatible server (vLLM, llama.cpp): its spans say `openai`, the
 * API it speaks, and `server.address` says which server it was, as the conventions ask of compatible APIs. A family
 * missing here (a new one) is named by its family name, so it is never unnamed; add it here when a value fits.
 */
const PROVIDER_BY_FAMILY: Readonly<Record<string, string>> = {
  openai: 'openai',
  anthropic: 'anthropic',
  gemini: 'gcp.gemini',
  vertex: 'gcp.vertex_ai',
  bedrock: 'aws.bedrock',
  azure: 'azure.ai.openai',
  local: 'switchyard.local',
};

export function genAiProviderName(family: string): string {
  return Object.hasOwn(PROVIDER_BY_FAMILY, family) ? PROVIDER_BY_FAMILY[family] : family;
}

/** `server.address` and `server.port` of a backend's base URL (the port its scheme implies when none is written). */
export function serverOf(baseUrl: string | undefined): { address: string; port: number } | undefined {
  if (!baseUrl) return undefined;
  try {
    const url = new URL(baseUrl);
    const port = url.port ? Number(url.port) : url.protocol === 'https:' ? 443 : 80;
    return { address: url.hostname.replace(/^\[|\]$/g, ''), port };
  } catch {
    return undefined;
  }
}
