import type { GatewayException } from '../common/errors/gateway.exception';
import type { StreamStep } from '../providers/provider-adapter';
import type { ChatCompletionChunk } from '../providers/shared/openai-types';
import type { StreamEncoder } from './stream-encoder';
import { sseData } from './sse-writer';

/**
 * OpenAI chat completion chunks as `data:` events, `data: [DONE]` at the end; errors in-band as OpenAI's
 * error body. The usage-only chunk goes out only when the client asked for it (`stream_options.include_usage`).
 */
export class OpenAiChunkEncoder implements StreamEncoder {
  constructor(
    /** The model name the client asked for (chunks carry it, not the upstream's name). */
    private readonly clientModel: string,
    private readonly includeUsage: boolean,
  ) {}

  event(_event: unknown, step: StreamStep): string {
    let out = '';
    for (const chunk of step.chunks) {
      const json = this.clientJson(chunk, step.chunks.length === 1 ? step.raw : undefined);
      if (json !== undefined) out += sseData(json);
    }
    return out;
  }

  end(): string {
    return 'data: [DONE]\n\n';
  }

  error(exception: GatewayException): string {
    return sseData(JSON.stringify(exception.toBody()));
  }

  /**
   * The chunk's JSON for the client, or undefined when it must not be sent at all. The upstream's own text
   * is reused when it is already right: re-serialising every chunk was ~4% of a stream's CPU.
   */
  private clientJson(chunk: ChatCompletionChunk, raw: string | undefined): string | undefined {
    const { clientModel, includeUsage } = this;
    // We asked upstream for usage; a client that did not gets neither the usage-only chunk nor `usage: null`.
    if (!includeUsage && chunk.usage && (!chunk.choices || chunk.choices.length === 0)) return undefined;
    if (raw !== undefined && chunk.model === clientModel) {
      if (includeUsage || !('usage' in chunk)) return raw;
      // OpenAI puts `"usage":null` last in every chunk once usage is requested.
      if (chunk.usage === null && raw.endsWith(NULL_USAGE_SUFFIX)) return `${raw.slice(0, -NULL_USAGE_SUFFIX.length)}}`;
    }
    chunk.model = clientModel;
    if (!includeUsage) delete chunk.usage;
    return JSON.stringify(chunk);
  }
}
const NULL_USAGE_SUFFIX = ',"usage":null}';
