import type { BedrockBackendConfig } from './bedrock.config';

/** The Bedrock Runtime operations the family calls, by their path's last segment. */
export type BedrockOperation =
  'invoke' | 'invoke-with-response-stream' | 'converse' | 'converse-stream' | 'count-tokens';

export const COUNT_TOKENS_SUFFIX = '/count-tokens';
export const INVOKE_SUFFIX = '/invoke';

/**
 * `/model/<id>/<operation>`: the model id, inference profile id (`us.anthropic...`, `global....`) or ARN escaped as
 * one path segment (an ARN's `:` and `/` included), as the AWS SDKs send it.
 */
export function modelPath(upstreamModel: string, operation: BedrockOperation): string {
  return `/model/${encodeURIComponent(upstreamModel)}/${operation}`;
}

/**
 * Whether a model is called with Anthropic's Messages body (InvokeModel): its id names the `anthropic.` publisher
 * (`anthropic.claude-...`, `us.anthropic.claude-...`, an ARN ending in one), or the backend lists it in
 * `anthropicModels` (an application inference profile's ARN names no model). Everything else goes through Converse.
 */
export function isAnthropicModel(upstreamModel: string, config: BedrockBackendConfig): boolean {
  return /(^|[./:])anthropic\./.test(upstreamModel) || (config.anthropicModels ?? []).includes(upstreamModel);
}
