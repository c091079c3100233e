import type { LocalAnswer } from './local-answer';
import { randomId } from '../../core/random-id';
import { normalizeUsage, type ChatCompletionChunk } from '../../core/openai-types';

/** OpenAI's usage object, as the worker's counts make it. */
export interface LocalUsage {
  prompt_tokens: number;
  completion_tokens: number;
  total_tokens: number;
  completion_tokens_details?: { reasoning_tokens: number };
  prompt_tokens_details?: { cached_tokens: number };
}

export function usageOf(
  promptTokens: number,
  completionTokens: number,
  reasoningTokens: number,
  cachedTokens = 0,
): LocalUsage {
  return {
    prompt_tokens: promptTokens,
    completion_tokens: completionTokens,
    total_tokens: promptTokens + completionTokens,
    ...(reasoningTokens ? { completion_tokens_details: { reasoning_tokens: reasoningTokens } } : {}),
    ...(cachedTokens ? { prompt_tokens_details: { cached_tokens: cachedTokens } } : {}),
  };
}

interface ToolCallState {
  id: string;
  name: string;
  arguments: string;
}

/**
 * One chat completion as the worker generates it, handed over in the gateway's canonical form: chat chunks as the
 * events arrive (content, reasoning_content and tool-call deltas), each a stream step; or the chat.completion
 * object at the end. Nothing is written as text here: the client's encoder writes what the client gets.
 */
export class LocalReply {
  readonly id = randomId('chatcmpl-', 29);
  readonly created = Math.floor(Date.now() / 1000);
  text = '';
  reasoning = '';
  private readonly calls: ToolCallState[] = [];

  constructor(
    private readonly answer: LocalAnswer,
    readonly stream: boolean,
    readonly model: string,
  ) {
    if (stream) this.chunk({ role: 'assistant', content: '' });
  }

  onText(text: string): void {
    this.text += text;
    if (this.stream) this.chunk({ content: text });
  }

  onThought(text: string): void {
    this.reasoning += text;
    if (this.stream) this.chunk({ reasoning_content: text });
  }

  /** The model started a call: streamed at once with its id and name, as OpenAI does, the arguments to follow. */
  onCallStart(index: number, name: string): void {
    const call = { id: randomId('call_', 24), name, arguments: '' };
    this.calls[index] = call;
    if (this.stream)
      this.chunk({
        tool_calls: [{ index, id: call.id, type: 'function', function: { name, arguments: '' } }],
      });
  }

  onCallArguments(index: number, text: string): void {
    const call = this.calls[index];
    if (!call) return;
    call.arguments += text;
    if (this.stream) this.chunk({ tool_calls: [{ index, function: { arguments: text } }] });
  }

  /** The last chunks (finish reason, then usage, which ends the stream) or the whole completion. */
  finish(finishReason: 'stop' | 'length' | 'tool_calls', usage: LocalUsage): void {
    if (this.stream) {
      this.chunk({}, finishReason);
      // In usage's canonical member order (as every family's usage chunk reaches the encoders).
      const last: ChatCompletionChunk = {
        ...this.base(),
        object: 'chat.completion.chunk',
        choices: [],
        usage: normalizeUsage(usage),
      };
      this.answer.step({ chunks: [last], done: true });
      this.answer.end();
    } else {
      const toolCalls = this.calls.filter(Boolean).map((call) => ({
        id: call.id,
        type: 'function',
        function: { name: call.name, arguments: call.arguments },
      }));
      const message = {
        role: 'assistant',
        // OpenAI's content is null for an answer that is only tool calls.
        content: toolCalls.length && !this.text ? null : this.text,
        refusal: null,
        ...(toolCalls.length ? { tool_calls: toolCalls } : {}),
        ...(this.reasoning ? { reasoning_content: this.reasoning } : {}),
      };
      this.answer.complete({
        ...this.base(),
        object: 'chat.completion',
        choices: [{ index: 0, message, finish_reason: finishReason, logprobs: null }],
        usage,
      });
    }
  }

  private chunk(delta: Record<string, unknown>, finishReason: string | null = null): void {
    const chunk: ChatCompletionChunk = {
      ...this.base(),
      object: 'chat.completion.chunk',
      choices: [{ index: 0, delta, finish_reason: finishReason }],
    };
    this.answer.step({ chunks: [chunk] });
  }

  private base() {
    return { id: this.id, created: this.created, model: this.model };
  }
}
