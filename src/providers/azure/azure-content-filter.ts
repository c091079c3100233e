import { normalizeUsage, type ChatCompletion, type ChatCompletionChunk } from '../../core/openai-types';
import { parseStreamEvent } from '../../core/json';
import type { SseEvent } from '../../core/sse';
import type { StreamStep } from '../stream-events';
import type { SseMapper } from '../shared/sse-decoder';
import { normalizeReasoningField } from '../shared/reasoning';

/**
 * Azure's content filter annotates OpenAI's chat wire with fields OpenAI does not have: `prompt_filter_results`
 * (and the older `prompt_annotations`) on the answer, `content_filter_results` / `content_filter_offsets` on each
 * choice, and in streams whole annotation-only events (the prompt's results first, with `choices: []`; with the
 * asynchronous filter, choices carrying only results and offsets, no delta). Strict OpenAI clients and the
 * translations to other APIs have no place for them, so they are removed; what the filter decided still reaches the
 * client as the wire's own refusal: `finish_reason: content_filter` (a Messages client gets `stop_reason: refusal`,
 * a Responses client an `incomplete` response with reason `content_filter`).
 */
const ANSWER_FIELDS = ['prompt_filter_results', 'prompt_annotations'] as const;
const CHOICE_FIELDS = ['content_filter_results', 'content_filter_offsets'] as const;
/** Cheap test before parsing: an event that names none of the filter's fields is left to the OpenAI mapper. */
const MARKS = /"(prompt_filter_results|prompt_annotations|content_filter_results|content_filter_offsets)"/;

type Annotated = Record<string, unknown> & { choices?: Array<Record<string, unknown>> };

/** A whole chat completion without the filter's fields (in place). */
export function withoutFilterResults(completion: ChatCompletion): ChatCompletion {
  const annotated = completion as unknown as Annotated;
  for (const field of ANSWER_FIELDS) delete annotated[field];
  for (const choice of annotated.choices ?? []) for (const field of CHOICE_FIELDS) delete choice[field];
  return completion;
}

/**
 * Azure's chat chunks -> OpenAI's: an event that carries the filter's fields is parsed and cleaned (an event that
 * is nothing but annotations yields no chunk); every other event goes to the OpenAI family's mapper as it is, so
 * its fast path for plain content deltas still applies (Azure's default streaming mode annotates every content
 * event, its asynchronous mode sends the annotations apart).
 */
export class AzureChunkMapper implements SseMapper {
  constructor(
    private readonly openai: SseMapper,
    private readonly backendId: string,
  ) {}

  map(event: SseEvent): StreamStep {
    if (!MARKS.test(event.data)) return this.openai.map(event);
    const chunk = parseStreamEvent<Annotated>(event.data, this.backendId);
    if (chunk.error) return this.openai.map(event); // an in-band error: the OpenAI mapper throws it
    for (const field of ANSWER_FIELDS) delete chunk[field];
    const choices: Array<Record<string, unknown>> = [];
    for (const choice of chunk.choices ?? []) {
      for (const field of CHOICE_FIELDS) delete choice[field];
      const finish = choice.finish_reason;
      // Annotation-only: no delta and no finish. A finish without a delta (the filter stopping the answer) gets one.
      if (choice.delta === undefined && (finish === null || finish === undefined)) continue;
      choice.delta ??= {};
      normalizeReasoningField(choice.delta as Record<string, unknown>);
      choices.push(choice);
    }
    if (!choices.length && !chunk.usage) return { chunks: [] };
    chunk.choices = choices;
    if (chunk.usage) chunk.usage = normalizeUsage(chunk.usage);
    return { chunks: [chunk as unknown as ChatCompletionChunk] };
  }
}
