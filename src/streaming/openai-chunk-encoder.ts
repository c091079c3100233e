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
  /** `"model":"<client model>"`, as the renamed chunks carry it. */
  private readonly clientField: string;
  /** The upstream's model name last seen, and the same as a `"model":` member (every chunk of a stream has one). */
  private upstreamModel?: string;
  private upstreamField = '';

  constructor(
    /** The model name the client asked for (chunks carry it, not the upstream's name). */
    private readonly clientModel: string,
    private readonly includeUsage: boolean,
  ) {
    this.clientField = `"model":${JSON.stringify(clientModel)}`;
  }

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
   * The chunk's JSON for the client, or undefined when it must not be sent at all. The upstream's own text is
   * reused, with its model name replaced, whenever that can be done exactly: serialising every chunk again was
   * as costly as parsing it (~1 µs a chunk), and upstreams almost always name another model than the client
   * asked for (an alias, or OpenAI's dated name for `gpt-4o`).
   */
  private clientJson(chunk: ChatCompletionChunk, raw: string | undefined): string | undefined {
    const { clientModel, includeUsage } = this;
    // We asked upstream for usage; a client that did not gets neither the usage-only chunk nor `usage: null`.
    if (!includeUsage && chunk.usage && (!chunk.choices || chunk.choices.length === 0)) return undefined;
    const text = raw === undefined || chunk.model === clientModel ? raw : this.renamed(raw, chunk.model);
    if (text !== undefined) {
      if (includeUsage || !('usage' in chunk)) return text;
      // OpenAI puts `"usage":null` last in every chunk once usage is requested.
      if (chunk.usage === null && text.endsWith(NULL_USAGE_SUFFIX)) return `${text.slice(0, -NULL_USAGE_SUFFIX.length)}}`;
    }
    chunk.model = clientModel;
    if (!includeUsage) delete chunk.usage;
    return JSON.stringify(chunk);
  }

  /**
   * `raw` with its top-level `"model":"<upstream model>"` member written as the client's model, or undefined
   * when a plain replacement could be wrong: the member is not written the way JSON.stringify writes it
   * (spacing, escapes), or appears more than once, or is not at the top level (an object opens before it).
   * An unescaped `"` always delimits a JSON string, so the member cannot be matched inside a string value.
   */
  private renamed(raw: string, upstreamModel: unknown): string | undefined {
    if (typeof upstreamModel !== 'string') return undefined;
    if (upstreamModel !== this.upstreamModel) {
      this.upstreamModel = upstreamModel;
      this.upstreamField = `"model":${JSON.stringify(upstreamModel)}`;
    }
    const field = this.upstreamField;
    const at = raw.indexOf(field);
    if (at < 0 || raw.lastIndexOf('{', at) !== 0 || raw.includes(field, at + field.length)) return undefined;
    return raw.slice(0, at) + this.clientField + raw.slice(at + field.length);
  }
}
const NULL_USAGE_SUFFIX = ',"usage":null}';
