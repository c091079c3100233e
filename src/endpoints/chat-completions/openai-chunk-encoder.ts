import type { GatewayException } from '../../core/errors/gateway.exception';
import type { StreamStep } from '../../providers/provider-adapter';
import { chatClientUsage, type ChatCompletionChunk } from '../../core/openai-types';
import type { ContentDelta, DeltaTemplate } from '../../core/delta-template';
import type { StreamEncoder } from '../../streaming/stream-encoder';
import { sseData } from '../../core/sse-writer';

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
  /** The content-delta template last seen, and its fixed text as the client gets it (undefined: not reusable). */
  private template?: DeltaTemplate;
  private templateParts?: readonly string[];

  constructor(
    /** The model name the client asked for (chunks carry it, not the upstream's name). */
    private readonly clientModel: string,
    private readonly includeUsage: boolean,
  ) {
    this.clientField = `"model":${JSON.stringify(clientModel)}`;
  }

  event(_event: unknown, step: StreamStep): string {
    const templated = step.delta && this.fromTemplate(step.delta);
    if (templated !== undefined) return sseData(templated);
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
      if (chunk.usage === null && text.endsWith(NULL_USAGE_SUFFIX))
        return `${text.slice(0, -NULL_USAGE_SUFFIX.length)}}`;
    }
    chunk.model = clientModel;
    if (!includeUsage) delete chunk.usage;
    else if (chunk.usage) chunk.usage = chatClientUsage(chunk.usage);
    return JSON.stringify(chunk);
  }

  /**
   * A content delta read from its template (providers/shared/delta-template.ts), written from the template's
   * fixed text as the client gets it (prepared once per template) and the event's own values.
   */
  private fromTemplate({ template, values }: ContentDelta): string | undefined {
    if (template !== this.template) {
      this.template = template;
      this.templateParts = this.clientParts(template);
    }
    const parts = this.templateParts;
    if (!parts) return undefined;
    let text = parts[0];
    for (let i = 0; i < values.length; i++) text += values[i] + parts[i + 1];
    return text;
  }

  /**
   * The template's fixed text with the model renamed and `"usage":null` dropped for a client that did not ask
   * for usage, or undefined when either is not written the plain way (then the chunk is parsed and serialised).
   * The fixed text has no escapes, so a key found there once is the chunk's only key of that name: the top-level one.
   */
  private clientParts(template: DeltaTemplate): readonly string[] | undefined {
    let parts: readonly string[] | undefined = template.parts;
    if (template.model !== this.clientModel) {
      if (typeof template.model !== 'string') return undefined;
      parts = replaceMember(parts, '"model"', `"model":${JSON.stringify(template.model)}`, this.clientField);
    }
    if (parts && !this.includeUsage && template.usageNull) {
      parts =
        replaceMember(parts, '"usage"', ',"usage":null', '') ??
        replaceMember(parts, '"usage"', '"usage":null,', '');
    }
    return parts;
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

/** `parts` with `member` replaced, when `key` appears exactly once in all of them and `member` is written as given. */
function replaceMember(
  parts: readonly string[],
  key: string,
  member: string,
  replacement: string,
): string[] | undefined {
  let found = -1;
  for (let i = 0; i < parts.length; i++) {
    const at = parts[i].indexOf(key);
    if (at < 0) continue;
    if (found >= 0 || parts[i].includes(key, at + 1)) return undefined;
    found = i;
  }
  const at = found < 0 ? -1 : parts[found].indexOf(member);
  if (at < 0) return undefined;
  const replaced = [...parts];
  replaced[found] = parts[found].slice(0, at) + replacement + parts[found].slice(at + member.length);
  return replaced;
}
