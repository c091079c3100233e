import type { ModelConfig } from '../config/config.schema';
import type { ChatRequest } from '../core/chat-request';
import { GatewayException } from '../core/errors/gateway.exception';
import { MAX_TOOLS } from '../core/chat-request';
import type { Deployment } from '../routing/model-router.service';
import type { ClientWire } from './client-wire';

/**
 * The request's thinking and vendor rules against one deployment of a model; throws a 400 naming the rule.
 * A deployment that takes the client's request natively checks it itself.
 */
export function checkChatRules(
  request: ChatRequest,
  wire: ClientWire,
  model: string,
  config: ModelConfig,
  deployment: Deployment,
): void {
  if (wire.native?.accepts(deployment)) return;
  const { backend, upstreamModel } = deployment;
  request = requestFor(request, wire, config, deployment);
  // A request from another API (Messages) translated to a chat completion keeps chat's limit (the chat DTO checks
  // a chat request's own); an Anthropic deployment that takes Messages natively has none it publishes.
  if (Array.isArray(request.tools) && request.tools.length > MAX_TOOLS) {
    throw new GatewayException(
      'invalid_request',
      `'tools' must have at most ${MAX_TOOLS} tools for the model \`${model}\` (OpenAI's limit per request, which a request translated to chat completions keeps).`,
      { param: 'tools', wireCode: null },
    );
  }
  if (request.thinking?.type === 'enabled' && !canThink(config, deployment)) {
    throw new GatewayException(
      'invalid_request',
      `The model \`${model}\` does not support extended reasoning ('thinking').`,
      {
        param: 'thinking',
        wireCode: null,
      },
    );
  }
  backend.adapter.validate?.(request, { upstreamModel, model: config });
}

/** Why a deployment cannot take this request (another deployment's or a fallback's vendor rules), if it cannot. */
export function chatRuleBreak(
  request: ChatRequest,
  wire: ClientWire,
  model: string,
  config: ModelConfig,
  deployment: Deployment,
): string | undefined {
  try {
    checkChatRules(request, wire, model, config, deployment);
    return undefined;
  } catch (error) {
    return error instanceof Error ? error.message : String(error);
  }
}

function canThink(config: ModelConfig, deployment: Deployment): boolean {
  return config.thinking !== 'none' && deployment.backend.client.canThink?.() !== false;
}

/** The request as one deployment gets it: without `thinking` where the client's API sends it as a hint and the model cannot think. */
export function requestFor(
  request: ChatRequest,
  wire: ClientWire,
  config: ModelConfig,
  deployment: Deployment,
): ChatRequest {
  if (!wire.thinkingIsAHint || request.thinking?.type !== 'enabled' || canThink(config, deployment))
    return request;
  return { ...request, thinking: undefined };
}
