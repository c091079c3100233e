import type { ChatCompletion, Usage } from '../../core/openai-types';
import { randomId } from '../../core/random-id';
import { usageOf } from '../anthropic/anthropic.response';

/** Converse's `stopReason` -> OpenAI's `finish_reason` (docs/backends.md, "Model families"). */
const FINISH_REASONS: Record<string, string> = {
  end_turn: 'stop',
  stop_sequence: 'stop',
  tool_use: 'tool_calls',
  max_tokens: 'length',
  model_context_window_exceeded: 'length',
  guardrail_intervened: 'content_filter',
  content_filtered: 'content_filter',
};

export function converseFinishReason(stopReason: unknown): string {
  return typeof stopReason === 'string' ? (FINISH_REASONS[stopReason] ?? 'stop') : 'stop';
}

export interface ConverseUsage {
  inputTokens?: number;
  outputTokens?: number;
  totalTokens?: number;
  cacheReadInputTokens?: number;
  cacheWriteInputTokens?: number;
}

/**
 * Converse usage -> OpenAI usage. As with Anthropic's, `inputTokens` leaves out the cache reads and writes, which
 * are input too: prompt_tokens counts all three (reads also in cached_tokens, writes in cache_write_tokens), so
 * total = prompt + completion, which is Converse's own totalTokens.
 */
export function converseUsage(usage: ConverseUsage | undefined): Usage {
  return usageOf({
    input_tokens: usage?.inputTokens,
    output_tokens: usage?.outputTokens,
    cache_read_input_tokens: usage?.cacheReadInputTokens,
    cache_creation_input_tokens: usage?.cacheWriteInputTokens,
  });
}

type ConverseBlock = {
  text?: string;
  toolUse?: { toolUseId?: string; name?: string; input?: unknown };
  reasoningContent?: { reasoningText?: { text?: string } };
};

/** Whether a 2xx body is a Converse answer (`output.message`), not a Messages one. */
export function isConverseAnswer(body: unknown): boolean {
  return typeof (body as { output?: { message?: unknown } } | null)?.output?.message === 'object';
}

/** A Converse answer -> chat.completion (text, reasoning text, tool calls, finish reason, usage). */
export function converseCompletion(body: {
  output: { message: { content?: ConverseBlock[] } };
  stopReason?: unknown;
  usage?: ConverseUsage;
}): ChatCompletion {
  let text = '';
  let reasoning = '';
  const toolCalls: unknown[] = [];
  for (const block of body.output.message.content ?? []) {
    if (typeof block.text === 'string') text += block.text;
    else if (block.reasoningContent?.reasoningText?.text)
      reasoning += block.reasoningContent.reasoningText.text;
    else if (block.toolUse) {
      toolCalls.push({
        id: block.toolUse.toolUseId,
        type: 'function',
        function: { name: block.toolUse.name, arguments: JSON.stringify(block.toolUse.input ?? {}) },
      });
    }
  }
  const message: Record<string, unknown> = {
    role: 'assistant',
    content: text || (toolCalls.length ? null : ''),
    refusal: null,
  };
  if (reasoning) message.reasoning_content = reasoning;
  if (toolCalls.length) message.tool_calls = toolCalls;
  return {
    id: randomId('chatcmpl-', 29), // Converse answers carry no id
    object: 'chat.completion',
    created: Math.floor(Date.now() / 1000),
    model: '',
    choices: [{ index: 0, message, finish_reason: converseFinishReason(body.stopReason), logprobs: null }],
    usage: converseUsage(body.usage),
  } as ChatCompletion;
}
