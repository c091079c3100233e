import type { BackendConfig } from '../../config/config.schema';
import { randomId } from '../../core/random-id';
import { GatewayException } from '../../core/errors/gateway.exception';
import type { ChatRequest } from '../../core/chat-request';
import type { EmbeddingRequest, EmbeddingResponse } from '../../core/embedding-request';
import type {
  CallTarget,
  NativeApi,
  NativeRequest,
  ProviderAdapter,
  StreamAnswer,
  StreamEvents,
  StreamStep,
  UpstreamCall,
} from '../provider-adapter';
import { normalizeUsage, type ChatCompletion, type ChatCompletionChunk } from '../../core/openai-types';
import { effortFor, normalizeReasoningField, requestedThinking } from '../shared/reasoning';
import { parseErrorBody, parseStreamEvent } from '../../core/json';
import { backendSecrets, mapUpstreamError, scrubError } from '../upstream-errors';
import type { SseEvent } from '../../core/sse';
import type { UpstreamBody } from '../upstream-client';
import { decodeSse, type SseMapper } from '../shared/sse-decoder';
import { completionFromResponse, ResponsesStreamMapper } from './responses-upstream';
import { spliceJson, type JsonSource } from '../../core/json-splice';
import { DeltaTemplate, type ContentDelta } from '../../core/delta-template';

/** Fields the gateway consumes itself and never forwards as-is. */
const GATEWAY_ONLY_FIELDS = ['thinking'] as const;

/**
 * Any OpenAI-compatible server (OpenAI, vLLM, llama.cpp, Ollama, Groq...). Requests
 * pass through with unknown fields intact; only the model name and the stream
 * options are ours to set.
 */
export class OpenAIAdapter implements ProviderAdapter {
  constructor(
    private readonly backendId: string,
    /** An openai backend's settings (a local one, which reuses this adapter, has no `responsesApi`). */
    private readonly config: BackendConfig & { responsesApi?: boolean },
    readonly family: string = 'openai',
  ) {}

  /** A backend configured with `responsesApi` takes Responses requests as they are. */
  get nativeApis(): readonly NativeApi[] {
    return this.config.responsesApi ? ['responses'] : [];
  }

  nativeCall(request: NativeRequest): UpstreamCall {
    const headers: Record<string, string> = {
      ...this.config.headers,
      'content-type': 'application/json',
      accept: request.stream ? 'text/event-stream' : 'application/json',
    };
    if (this.config.apiKey) headers.authorization = `Bearer ${this.config.apiKey}`;
    return { path: '/responses', headers, body: request.body };
  }

  buildRequest(request: ChatRequest, target: CallTarget, stream: boolean, source?: JsonSource): UpstreamCall {
    const body: Record<string, unknown> = { ...request, model: target.upstreamModel };
    for (const field of GATEWAY_ONLY_FIELDS) delete body[field];
    applyThinking(body, request, target);
    if (stream) {
      body.stream = true;
      // Always ask for usage so every stream can be accounted; the relay strips it if the client did not ask.
      body.stream_options = { ...(request.stream_options ?? {}), include_usage: true };
    } else {
      delete body.stream;
      delete body.stream_options;
    }
    const headers: Record<string, string> = {
      ...this.config.headers,
      'content-type': 'application/json',
      accept: stream ? 'text/event-stream' : 'application/json',
    };
    if (this.config.apiKey) headers.authorization = `Bearer ${this.config.apiKey}`;
    return {
      path: '/chat/completions',
      headers,
      body: (source && spliceJson(source, body)) ?? JSON.stringify(body),
    };
  }

  parseResponse(body: unknown, native?: NativeApi): ChatCompletion {
    if (native === 'responses') {
      try {
        return completionFromResponse(body, this.backendId);
      } catch (error) {
        // A failed Response carries the vendor's words, which may quote the backend's key.
        throw error instanceof GatewayException ? scrubError(error, backendSecrets(this.config)) : error;
      }
    }
    const reply = body as (Partial<ChatCompletion> & { error?: unknown }) | null;
    if (reply && typeof reply === 'object' && !Array.isArray(reply.choices) && isObject(reply.error)) {
      // An error in a 200's body (OpenRouter does this once the model has started): an upstream error.
      throw this.errorFromBody(inBandStatus(reply.error), reply, {});
    }
    if (!reply || typeof reply !== 'object' || !Array.isArray(reply.choices)) {
      throw new GatewayException(
        'upstream_error',
        `Backend "${this.backendId}" sent a malformed chat completion.`,
      );
    }
    for (const choice of reply.choices) normalizeReasoningField(choice?.message);
    return {
      ...reply,
      id: typeof reply.id === 'string' ? reply.id : randomId('chatcmpl-', 29),
      object: 'chat.completion',
      created: typeof reply.created === 'number' ? reply.created : Math.floor(Date.now() / 1000),
      model: String(reply.model ?? ''),
      choices: reply.choices,
      usage: normalizeUsage(reply.usage),
    };
  }

  /** Embeddings pass through as sent (new fields included); only the model is ours to set. */
  buildEmbeddingRequest(request: EmbeddingRequest, target: CallTarget): UpstreamCall {
    const headers: Record<string, string> = {
      ...this.config.headers,
      'content-type': 'application/json',
      accept: 'application/json',
    };
    if (this.config.apiKey) headers.authorization = `Bearer ${this.config.apiKey}`;
    return {
      path: '/embeddings',
      headers,
      body: JSON.stringify({ ...request, model: target.upstreamModel }),
    };
  }

  parseEmbeddingResponse(body: unknown): EmbeddingResponse {
    const reply = body as Partial<EmbeddingResponse> | null;
    if (!reply || typeof reply !== 'object' || !Array.isArray(reply.data)) {
      throw new GatewayException(
        'upstream_error',
        `Backend "${this.backendId}" sent a malformed embeddings list.`,
      );
    }
    const usage =
      reply.usage && typeof reply.usage.prompt_tokens === 'number'
        ? { prompt_tokens: reply.usage.prompt_tokens, total_tokens: reply.usage.prompt_tokens }
        : undefined;
    return {
      object: 'list',
      data: reply.data,
      model: String(reply.model ?? ''),
      ...(usage ? { usage } : {}),
    };
  }

  /** Chat completion chunks or, for a native call, Responses events: SSE either way. */
  decodeStream(body: UpstreamBody, answer: StreamAnswer): StreamEvents {
    return decodeSse(
      body,
      answer.native === 'responses' ? new ResponsesStreamMapper(this.backendId) : this.chunkMapper(),
    );
  }

  /**
   * Chat completion chunks: `[DONE]` ends them; an ordinary content delta is read from the template of the last
   * one parsed (core/delta-template.ts) instead of parsed.
   */
  chunkMapper(): SseMapper {
    let template: DeltaTemplate | undefined;
    return {
      map: (event: SseEvent): StreamStep => {
        if (event.data === '[DONE]') return { chunks: [], done: true };
        const delta = template?.read(event.data);
        if (delta) return new ContentDeltaStep(event.data, delta, this.backendId);
        const chunk = parseStreamEvent<ChatCompletionChunk & { error?: unknown }>(event.data, this.backendId);
        if (chunk.error) throw this.errorFromBody(inBandStatus(chunk.error), chunk, {});
        const renamesReasoning =
          chunk.choices?.some((choice) => typeof choice?.delta?.reasoning === 'string') === true;
        // Reusable as is unless it was sent over several `data:` lines (joined with \n, which would break our framing).
        if (!chunk.usage && !renamesReasoning && !event.data.includes('\n')) {
          template = DeltaTemplate.learn(chunk, event.data) ?? template;
          return { chunks: [chunk], raw: event.data };
        }
        if (chunk.usage) chunk.usage = normalizeUsage(chunk.usage);
        for (const choice of chunk.choices ?? []) normalizeReasoningField(choice?.delta);
        return { chunks: [chunk] };
      },
    };
  }

  mapError(
    status: number,
    body: string,
    headers: Record<string, string | string[] | undefined>,
  ): GatewayException {
    return this.errorFromBody(status, parseErrorBody(body), headers);
  }

  /** OpenAI's `{error: {...}}`, vLLM's older flat `{message, ...}`, or nothing usable. */
  private errorFromBody(
    status: number,
    body: unknown,
    headers: Record<string, string | string[] | undefined>,
  ) {
    const root = (body ?? {}) as Record<string, unknown>;
    const error = (typeof root.error === 'object' && root.error ? root.error : root) as Record<
      string,
      unknown
    >;
    return mapUpstreamError({
      backendId: this.backendId,
      status,
      message: typeof error.message === 'string' ? error.message : undefined,
      type: typeof error.type === 'string' ? error.type : undefined,
      code: typeof error.code === 'string' ? error.code : null,
      param: typeof error.param === 'string' ? error.param : null,
      headers,
      secrets: backendSecrets(this.config),
    });
  }
}

/** A content delta read from its template: its chunk is parsed only if a consumer asks for `chunks`. */
class ContentDeltaStep implements StreamStep {
  private parsed?: ChatCompletionChunk[];
  upstream?: SseEvent;

  constructor(
    readonly raw: string,
    readonly delta: ContentDelta,
    private readonly backendId: string,
  ) {}

  get chunks(): ChatCompletionChunk[] {
    return (this.parsed ??= [parseStreamEvent<ChatCompletionChunk>(this.raw, this.backendId)]);
  }
}

/**
 * `thinking` for OpenAI-compatible servers, by the model's configured mode:
 * - `reasoning_effort` (o-series, gpt-5): the budget becomes low/medium/high by the model's
 *   thresholds, and `max_tokens` becomes `max_completion_tokens` (those models refuse the former);
 * - `chat_template_kwargs` (vLLM/SGLang/llama.cpp, Qwen3-style templates): `enable_thinking`,
 *   plus the budget in the configured top-level field.
 */
function applyThinking(body: Record<string, unknown>, request: ChatRequest, target: CallTarget): void {
  const thinking = requestedThinking(request);
  const mode = target.model.thinking;
  if (mode === 'reasoning_effort') {
    if (body.max_tokens !== undefined && body.max_completion_tokens === undefined)
      body.max_completion_tokens = body.max_tokens;
    delete body.max_tokens;
    if (typeof thinking === 'number')
      body.reasoning_effort = effortFor(thinking, target.model.effortThresholds);
  } else if (mode === 'native' && request.thinking) {
    // Only local backends take `native` here: their worker reads the request's thinking as is.
    body.thinking = request.thinking;
  } else if (mode === 'chat_template_kwargs' && thinking !== undefined) {
    const kwargs =
      typeof body.chat_template_kwargs === 'object' && body.chat_template_kwargs
        ? body.chat_template_kwargs
        : {};
    body.chat_template_kwargs = { ...kwargs, enable_thinking: thinking !== false };
    if (typeof thinking === 'number' && target.model.budgetField) body[target.model.budgetField] = thinking;
  }
}

/**
 * The HTTP status an error sent after a 200 stands for: its numeric `code` (OpenRouter's, vLLM's), else a server
 * error (OpenAI's in-band errors name a type, not a status).
 */
function inBandStatus(error: unknown): number {
  const code = isObject(error) ? error.code : undefined;
  return typeof code === 'number' && code >= 400 && code <= 599 ? code : 500;
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
