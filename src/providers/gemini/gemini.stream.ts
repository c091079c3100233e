import { GatewayException } from '../../core/errors/gateway.exception';
import type { StreamStep } from '../stream-events';
import type { SseMapper } from '../shared/sse-decoder';
import type { ChatCompletionChunk } from '../../core/openai-types';
import { parseStreamEvent } from '../../core/json';
import type { SseEvent } from '../../core/sse';
import { randomId } from '../../core/random-id';
import {
  blockedCandidates,
  finishReasonOf,
  splitParts,
  usageOf,
  type GeminiResponse,
  type GeminiUsage,
} from './gemini.response';

/**
 * `streamGenerateContent?alt=sse`: every event is a whole GenerateContentResponse with the
 * next parts of each candidate; usageMetadata is cumulative; there is no end marker. With
 * `candidateCount` (n) above 1 the candidates finish separately, each with its finishReason, in
 * the same event or in later ones: the stream is complete when every candidate has finished, and
 * that event also brings the usage chunk (the last, cumulative usageMetadata) and ends it, or the body ends
 * first (see `end`).
 */
export class GeminiStreamMapper implements SseMapper {
  private readonly id = randomId('chatcmpl-', 29);
  private readonly created = Math.floor(Date.now() / 1000);
  private model = '';
  private started = new Set<number>();
  private readonly toolCounts = new Map<number, number>();
  private readonly finished = new Set<number>();
  private usage: GeminiUsage = {};

  constructor(
    private readonly onError: (status: number, body: unknown) => GatewayException,
    /** How many candidates the request asked for (its n). */
    private readonly candidates = 1,
  ) {}

  map(event: SseEvent): StreamStep {
    const data = parseStreamEvent<GeminiResponse>(event.data);
    if (data.error) throw this.onError(Number(data.error.code) || 500, data);
    if (data.modelVersion) this.model = String(data.modelVersion);
    if (data.usageMetadata) this.usage = data.usageMetadata;
    const chunks: ChatCompletionChunk[] = [];
    for (const candidate of blockedCandidates(data, this.candidates) ?? data.candidates ?? []) {
      const index = Number(candidate.index ?? 0);
      if (!this.started.has(index)) {
        this.started.add(index);
        chunks.push(this.chunk(index, { role: 'assistant', content: '' }));
      }
      const called = this.toolCounts.get(index) ?? 0;
      const { text, reasoning, toolCalls } = splitParts(candidate.content?.parts ?? []);
      if (reasoning) chunks.push(this.chunk(index, { reasoning_content: reasoning }));
      if (text) chunks.push(this.chunk(index, { content: text }));
      if (toolCalls.length) {
        chunks.push(
          this.chunk(index, { tool_calls: toolCalls.map((call, i) => ({ index: called + i, ...call })) }),
        );
        this.toolCounts.set(index, called + toolCalls.length);
      }
      const finish = finishReasonOf(candidate.finishReason, (this.toolCounts.get(index) ?? 0) > 0);
      if (finish && !this.finished.has(index)) {
        chunks.push(this.chunk(index, {}, finish));
        this.finished.add(index);
      }
    }
    if (this.finished.size < this.candidates) return { chunks };
    return { chunks: [...chunks, this.usageChunk()], done: true };
  }

  /**
   * The body ended with fewer candidates finished than asked (one never sent its finishReason): the answer is
   * over, and the usage chunk carries Gemini's last, cumulative usageMetadata, so what every candidate generated
   * is counted as Gemini counted it (not estimated, and not lost). A body that ended before any candidate
   * finished is a cut stream: nothing here, and the relay reports it.
   */
  end(): StreamStep | undefined {
    if (this.finished.size === 0 || this.finished.size >= this.candidates) return undefined;
    return { chunks: [this.usageChunk()], done: true };
  }

  private usageChunk(): ChatCompletionChunk {
    return {
      id: this.id,
      object: 'chat.completion.chunk',
      created: this.created,
      model: this.model,
      choices: [],
      usage: usageOf(this.usage),
    };
  }

  private chunk(
    index: number,
    delta: Record<string, unknown>,
    finishReason: string | null = null,
  ): ChatCompletionChunk {
    return {
      id: this.id,
      object: 'chat.completion.chunk',
      created: this.created,
      model: this.model,
      choices: [{ index, delta, finish_reason: finishReason }],
    };
  }
}
