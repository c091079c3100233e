import type { ChatRequest } from '../../core/chat-request';
import type { EffortThresholdsConfig } from '../../config/config.schema';
import { GatewayException } from '../../core/errors/gateway.exception';

/** The client's thinking request: a budget when enabled, `false` when explicitly disabled, undefined when absent. */
export function requestedThinking(request: ChatRequest): number | false | undefined {
  if (request.thinking?.type === 'enabled') return request.thinking.budget_tokens ?? 0;
  if (request.thinking?.type === 'disabled') return false;
  return undefined;
}

/** OpenAI-style `reasoning_effort` for a token budget, by the model's configured thresholds. */
export function effortFor(budget: number, thresholds: EffortThresholdsConfig): 'low' | 'medium' | 'high' {
  if (budget <= thresholds.low) return 'low';
  if (budget >= thresholds.high) return 'high';
  return 'medium';
}

/** The completion limit the client asked for (`max_completion_tokens` wins over the older `max_tokens`). */
export function requestedMaxTokens(request: ChatRequest): number | undefined {
  return request.max_completion_tokens ?? request.max_tokens ?? undefined;
}

/** A 400 raised before any upstream call, naming the rule the vendor would enforce. */
export function constraint(message: string, param: string): GatewayException {
  return new GatewayException('invalid_request', message, { param, wireCode: null });
}

/**
 * OpenAI-compatible servers name reasoning text `reasoning_content` (llama.cpp, DeepSeek,
 * older vLLM) or `reasoning` (vLLM >= 0.17, OpenRouter). Clients always get `reasoning_content`.
 */
export function normalizeReasoningField(target: Record<string, unknown> | undefined): void {
  if (!target || typeof target.reasoning !== 'string') return;
  if (typeof target.reasoning_content !== 'string') target.reasoning_content = target.reasoning;
  delete target.reasoning;
}
