import type { ChatCompletionChunk, Usage } from '../../core/openai-types';
import { parseStreamEvent } from '../../core/json';
import { randomId } from '../../core/random-id';
import type { SseEvent } from '../../core/sse';
import type { StreamStep } from '../stream-events';
import type { SseMapper } from '../shared/sse-decoder';
import { converseFinishReason, converseUsage, type ConverseUsage } from './converse.response';

/** The ConverseStream event members this mapper reads (each event's payload, named by its `:event-type`). */
interface ConverseEvent {
  role?: string;
  contentBlockIndex?: number;
  start?: { toolUse?: { toolUseId?: string; name?: string } };
  delta?: {
    text?: string;
    toolUse?: { input?: string };
    reasoningContent?: { text?: string; signature?: string };
  };
  stopReason?: string;
  usage?: ConverseUsage;
}

/**
 * ConverseStream events -> OpenAI chunks, one event at a time: messageStart -> the role chunk; a text delta ->
 * content; a reasoning text delta -> reasoning_content; contentBlockStart with a toolUse + its input deltas ->
 * tool_calls; messageStop -> finish_reason; metadata (after messageStop, with the usage) -> the usage chunk, and
 * the end. Padding (`p`) and unknown members or events are ignored.
 */
export class ConverseStreamMapper implements SseMapper {
  private readonly id = randomId('chatcmpl-', 29);
  private readonly created = Math.floor(Date.now() / 1000);
  private readonly toolIndexes = new Map<number, number>();
  private stopped = false;

  constructor(private readonly model: string) {}

  map(event: SseEvent): StreamStep {
    const data = parseStreamEvent<ConverseEvent>(event.data);
    switch (event.event) {
      case 'messageStart':
        return this.emit({ role: 'assistant', content: '' });
      case 'contentBlockStart': {
        const tool = data.start?.toolUse;
        if (!tool) return { chunks: [] };
        const index = this.toolIndexes.size;
        this.toolIndexes.set(Number(data.contentBlockIndex), index);
        return this.emit({
          tool_calls: [
            { index, id: tool.toolUseId, type: 'function', function: { name: tool.name, arguments: '' } },
          ],
        });
      }
      case 'contentBlockDelta':
        return this.delta(Number(data.contentBlockIndex), data.delta ?? {});
      case 'messageStop':
        this.stopped = true;
        return this.emit({}, converseFinishReason(data.stopReason));
      case 'metadata':
        return { chunks: [this.chunk([], converseUsage(data.usage))], done: true };
      default:
        return { chunks: [] }; // contentBlockStop, and event types added later
    }
  }

  /** The body ended after messageStop without the metadata event: the answer is whole, its usage unknown. */
  end(): StreamStep | undefined {
    return this.stopped ? { chunks: [], done: true } : undefined;
  }

  private delta(block: number, delta: NonNullable<ConverseEvent['delta']>): StreamStep {
    if (typeof delta.text === 'string') return this.emit({ content: delta.text });
    if (typeof delta.reasoningContent?.text === 'string')
      return this.emit({ reasoning_content: delta.reasoningContent.text });
    if (typeof delta.toolUse?.input === 'string') {
      return this.emit({
        tool_calls: [
          { index: this.toolIndexes.get(block) ?? 0, function: { arguments: delta.toolUse.input } },
        ],
      });
    }
    return { chunks: [] };
  }

  private emit(delta: Record<string, unknown>, finishReason: string | null = null): StreamStep {
    return { chunks: [this.chunk([{ index: 0, delta, finish_reason: finishReason }])] };
  }

  private chunk(choices: ChatCompletionChunk['choices'], usage?: Usage): ChatCompletionChunk {
    const chunk: ChatCompletionChunk = {
      id: this.id,
      object: 'chat.completion.chunk',
      created: this.created,
      model: this.model,
      choices,
    };
    if (usage) chunk.usage = usage;
    return chunk;
  }
}
