/**
 * Per-model rules of Anthropic's Messages API that the chat translation follows (wire-formats.md D.1, D.2).
 * The Bedrock and Vertex families reuse the translation, so ids are matched in every spelling:
 * `claude-sonnet-5-5` (Anthropic), `claude-sonnet-5-5@20260301` (Vertex), `anthropic.claude-opus-4-8-v1:0` and
 * `us.anthropic.claude-sonnet-5-5-20260301-v1:0` (Bedrock, with or without a cross-region prefix).
 */

/**
 * Models that take only `thinking: {type: "adaptive"}` (depth by `output_config.effort`): a manual
 * `{type: "enabled", budget_tokens}` is a 400 on Opus 4.7/4.8, Sonnet 5 and Fable/Mythos 5. The whole 5
 * generation is matched (Haiku 5 too): adaptive is accepted by every model that has it, so erring this way is safe.
 * These models also refuse a temperature other than 1, top_p below 0.99 and any top_k ("models released after
 * Claude Opus 4.6").
 */
const ADAPTIVE_ONLY = /^claude-(?:opus-4-[78]|(?:opus|sonnet|haiku)-5|fable|mythos)/;

/** Models on which `{type: "disabled"}` is not supported (Mythos Preview, Fable 5, Mythos 5): they always think. */
const ALWAYS_THINKING = /^claude-(?:fable|mythos)/;

/** Bedrock's `anthropic.` provider prefix, with an optional inference-profile region (`us.`, `eu.`, `apac.`, `global.`). */
const BEDROCK_PREFIX = /^(?:[a-z]+\.)?anthropic\./;

/** The upstream id as Anthropic spells it (Bedrock's prefix removed; Vertex's `@date` suffix does not matter here). */
function anthropicId(upstreamModel: string): string {
  return upstreamModel.toLowerCase().replace(BEDROCK_PREFIX, '');
}

export function needsAdaptiveThinking(upstreamModel: string): boolean {
  return ADAPTIVE_ONLY.test(anthropicId(upstreamModel));
}

export function canDisableThinking(upstreamModel: string): boolean {
  return !ALWAYS_THINKING.test(anthropicId(upstreamModel));
}

/** `output_config.effort` values Anthropic defines. */
export type AnthropicEffort = 'low' | 'medium' | 'high' | 'xhigh' | 'max';

/** OpenAI `reasoning_effort` -> Anthropic effort; `none` turns thinking off. */
const EFFORT_OF_REASONING_EFFORT: Readonly<Record<string, AnthropicEffort | 'off'>> = {
  none: 'off',
  minimal: 'low',
  low: 'low',
  medium: 'medium',
  high: 'high',
  xhigh: 'xhigh',
  max: 'max',
};

export const REASONING_EFFORTS = Object.keys(EFFORT_OF_REASONING_EFFORT);

/** The effort for a client's `reasoning_effort`, `'off'` for `none`, undefined for a value OpenAI does not define. */
export function effortOfReasoningEffort(value: string): AnthropicEffort | 'off' | undefined {
  return Object.hasOwn(EFFORT_OF_REASONING_EFFORT, value) ? EFFORT_OF_REASONING_EFFORT[value] : undefined;
}

/**
 * An explicit thinking budget -> the nearest effort, by the gateway's own effort budgets (Responses and Messages
 * translate low/medium/high to 2048/8192/16384): below 4096 is `low`, below 12288 `medium`, else `high`. A budget
 * never asks for `xhigh` or `max` (not every adaptive model takes them); clients ask for those by name.
 */
export function effortOfBudget(budget: number): AnthropicEffort {
  if (budget < 4096) return 'low';
  if (budget < 12288) return 'medium';
  return 'high';
}
