import type { Usage } from '../../core/openai-types';
import { randomId } from '../../core/random-id';

/** Gemini `finishReason` -> OpenAI `finish_reason` (the "Model families" table in docs/backends.md). */
const FINISH_REASONS: Record<string, string> = {
  STOP: 'stop',
  MAX_TOKENS: 'length',
  SAFETY: 'content_filter',
  RECITATION: 'content_filter',
  BLOCKLIST: 'content_filter',
  PROHIBITED_CONTENT: 'content_filter',
  SPII: 'content_filter',
  IMAGE_SAFETY: 'content_filter',
  LANGUAGE: 'content_filter',
  MALFORMED_FUNCTION_CALL: 'stop',
  OTHER: 'stop',
};

export function finishReasonOf(reason: unknown, calledTools: boolean): string | null {
  if (typeof reason !== 'string' || reason === 'FINISH_REASON_UNSPECIFIED') return null;
  if (reason === 'STOP' && calledTools) return 'tool_calls';
  return FINISH_REASONS[reason] ?? 'stop';
}

export interface GeminiUsage {
  promptTokenCount?: number;
  candidatesTokenCount?: number;
  thoughtsTokenCount?: number;
  cachedContentTokenCount?: number;
  toolUsePromptTokenCount?: number;
}

const n = (value: unknown) => (typeof value === 'number' && value > 0 ? value : 0);

/** usageMetadata -> OpenAI usage: thoughts are completion tokens, and reasoning_tokens. */
export function usageOf(usage: GeminiUsage): Usage {
  const prompt = n(usage.promptTokenCount) + n(usage.toolUsePromptTokenCount);
  const reasoning = n(usage.thoughtsTokenCount);
  const completion = n(usage.candidatesTokenCount) + reasoning;
  return {
    prompt_tokens: prompt,
    completion_tokens: completion,
    total_tokens: prompt + completion,
    prompt_tokens_details: { cached_tokens: n(usage.cachedContentTokenCount) },
    completion_tokens_details: { reasoning_tokens: reasoning },
  };
}

export interface GeminiPart {
  text?: string;
  thought?: boolean;
  functionCall?: { name: string; args?: unknown; id?: string };
}

/** A candidate's parts, split into text, thought text and function calls. */
export function splitParts(parts: GeminiPart[]) {
  let text = '';
  let reasoning = '';
  const toolCalls: Array<{ id: string; type: 'function'; function: { name: string; arguments: string } }> =
    [];
  for (const part of parts) {
    if (part.functionCall) {
      toolCalls.push({
        // Gemini's calls have no id unless it sends one: a random one, as OpenAI's (a counter per answer, call_0_0,
        // repeated in every turn of a conversation and so could not say which call a tool result answers).
        id: part.functionCall.id ?? randomId('call_', 24),
        type: 'function',
        function: { name: part.functionCall.name, arguments: JSON.stringify(part.functionCall.args ?? {}) },
      });
    } else if (typeof part.text === 'string') {
      if (part.thought) reasoning += part.text;
      else text += part.text;
    }
  }
  return { text, reasoning, toolCalls };
}

/** The GenerateContentResponse fields the adapter reads (one per stream event, too). */
export interface GeminiResponse {
  candidates?: Array<{ index?: number; content?: { parts?: GeminiPart[] }; finishReason?: string }>;
  usageMetadata?: GeminiUsage;
  modelVersion?: string;
  responseId?: string;
  error?: { code?: number; message?: string; status?: string };
  /** Set, with no candidates, when Gemini blocked the prompt itself (the answer is still a 200). */
  promptFeedback?: { blockReason?: string };
}

/**
 * A prompt Gemini blocks is a 200 with no candidates and `promptFeedback.blockReason` (SAFETY, BLOCKLIST,
 * PROHIBITED_CONTENT, ...): the answer is the content filter's, one empty candidate finished by it per candidate
 * asked for. Undefined when the prompt was not blocked.
 */
export function blockedCandidates(
  reply: GeminiResponse,
  count: number,
): NonNullable<GeminiResponse['candidates']> | undefined {
  if (reply.candidates?.length || !reply.promptFeedback?.blockReason) return undefined;
  return Array.from({ length: count }, (_, index) => ({ index, finishReason: 'SAFETY' }));
}
