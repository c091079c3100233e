/** The OpenAI-shaped operations an Azure OpenAI resource serves, as the OpenAI family's calls name them. */
export type AzureOperation = '/chat/completions' | '/embeddings' | '/responses';

export const V1 = 'v1';

/**
 * Where an operation lives on an Azure OpenAI resource (paths under `baseUrl`):
 * - `v1` (the GA "v1 API"): `/openai/v1/<operation>`, the deployment named by the body's `model`, no api-version;
 * - a dated version: `/openai/deployments/<deployment>/<operation>?api-version=<version>` (chat completions and
 *   embeddings; the Responses API is only offered on v1, see docs/backends.md).
 */
export function azurePath(apiVersion: string, operation: AzureOperation, deployment: string): string {
  if (apiVersion === V1) return `/openai/v1${operation}`;
  if (operation === '/responses') throw new Error('the Responses API is served on apiVersion v1 only'); // never asked: nativeApis says so
  return `/openai/deployments/${encodeURIComponent(deployment)}${operation}?api-version=${encodeURIComponent(apiVersion)}`;
}

/** Whether a call path (as the OpenAI family builds it) is one Azure serves. */
export function isAzureOperation(path: string): path is AzureOperation {
  return path === '/chat/completions' || path === '/embeddings' || path === '/responses';
}
