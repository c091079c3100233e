import type { ChatRequest } from '../../core/chat-request';
import type { EmbeddingRequest, EmbeddingResponse } from '../../core/embedding-request';
import { GatewayException } from '../../core/errors/gateway.exception';
import { parseErrorBody } from '../../core/json';
import type { ChatCompletion } from '../../core/openai-types';
import type { SseEvent } from '../../core/sse';
import { AnthropicAdapter } from '../anthropic/anthropic.adapter';
import { AnthropicBackendConfig } from '../anthropic/anthropic.config';
import { toAnthropicBody, validateForAnthropic } from '../anthropic/anthropic.request';
import { AnthropicStreamMapper } from '../anthropic/anthropic.stream';
import { GeminiAdapter } from '../gemini/gemini.adapter';
import { toGeminiBody, validateForGemini } from '../gemini/gemini.request';
import { GeminiStreamMapper } from '../gemini/gemini.stream';
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
import { decodeSse, type SseMapper } from '../shared/sse-decoder';
import type { UpstreamBody } from '../upstream-client';
import { backendSecrets, mapUpstreamError } from '../upstream-errors';
import {
  VERTEX_ANTHROPIC_VERSION,
  vertexBetas,
  vertexCountTokensBody,
  vertexMessagesBody,
} from './vertex-anthropic';
import type { AccessTokens } from './vertex-access-tokens';
import { publisherOf, vertexModelPath } from './vertex-paths';
import type { VertexBackendConfig } from './vertex.config';
import { fromVertexEmbeddings, toVertexEmbeddingBody } from './vertex.embeddings';

type Headers = Record<string, string | string[] | undefined>;

/**
 * Google Vertex AI: Gemini models through `publishers/google/...:generateContent` with the Gemini family's
 * translation and stream mapper, Claude models through `publishers/anthropic/...:rawPredict` with the Anthropic
 * family's (the Messages body without `model`, with `anthropic_version`), text embeddings through `:predict`.
 * Which publisher a model is comes from its upstream id (vertex-paths.ts, publisherOf). The answers are read by
 * the two families' own readers: a Messages answer says `"type": "message"` and its stream names its events, which
 * Gemini's never do (the adapter contract hands parseResponse and decodeStream no target, so they tell by that).
 */
export class VertexAdapter implements ProviderAdapter {
  readonly family = 'vertex';
  readonly nativeApis = ['messages', 'messages.count_tokens'] as const;
  private readonly gemini: GeminiAdapter;
  private readonly claude: AnthropicAdapter;

  constructor(
    private readonly backendId: string,
    private readonly config: VertexBackendConfig,
    private readonly tokens: AccessTokens,
  ) {
    // Their answer readers only (neither has a key to send: the config has none).
    this.gemini = new GeminiAdapter(backendId, config);
    this.claude = new AnthropicAdapter(backendId, Object.assign(new AnthropicBackendConfig(), config));
  }

  /** Only Claude models take Messages requests as they are; a Gemini model on the same backend is translated. */
  speaksNatively(api: NativeApi, upstreamModel: string): boolean {
    return api !== 'responses' && publisherOf(upstreamModel).publisher === 'anthropic';
  }

  validate(request: ChatRequest, target: CallTarget): void {
    if (publisherOf(target.upstreamModel).publisher === 'anthropic') validateForAnthropic(request, target);
    else validateForGemini(request, target);
  }

  buildRequest(request: ChatRequest, target: CallTarget, stream: boolean): UpstreamCall {
    const { publisher, model } = publisherOf(target.upstreamModel);
    if (publisher === 'google') {
      return {
        path: vertexModelPath(
          this.config,
          'google',
          model,
          stream ? 'streamGenerateContent?alt=sse' : 'generateContent',
        ),
        headers: this.headers(stream),
        body: JSON.stringify(toGeminiBody(request, target)),
      };
    }
    const body = toAnthropicBody(request, target, stream);
    delete body.model; // in the path
    return {
      path: vertexModelPath(this.config, 'anthropic', model, stream ? 'streamRawPredict' : 'rawPredict'),
      headers: this.headers(stream),
      body: JSON.stringify({ anthropic_version: VERTEX_ANTHROPIC_VERSION, ...body }),
    };
  }

  /**
   * A Messages client's request to a Claude model, as it came (its bytes; `model` moved to the path), with the
   * client's `anthropic-beta` values Vertex accepts. count_tokens goes to Vertex's `count-tokens` model, which
   * takes no betas.
   */
  nativeCall(request: NativeRequest): UpstreamCall {
    const headers = this.headers(request.stream);
    if (request.api === 'messages.count_tokens') {
      const text = typeof request.body === 'string' ? request.body : request.body.toString('utf8');
      const named = (JSON.parse(text) as { model?: unknown }).model;
      const model = publisherOf(String(named)).model;
      return {
        path: vertexModelPath(this.config, 'anthropic', 'count-tokens', 'rawPredict'),
        headers,
        body: vertexCountTokensBody(text, model),
      };
    }
    const { model: named, body } = vertexMessagesBody(request.body);
    const betas = vertexBetas(request.clientHeaders['anthropic-beta'], this.config.anthropicBetas);
    if (betas) headers['anthropic-beta'] = betas;
    const { model } = publisherOf(named);
    return {
      path: vertexModelPath(
        this.config,
        'anthropic',
        model,
        request.stream ? 'streamRawPredict' : 'rawPredict',
      ),
      headers,
      body,
    };
  }

  private headers(stream: boolean): Record<string, string> {
    return {
      ...this.config.headers,
      'content-type': 'application/json',
      accept: stream ? 'text/event-stream' : 'application/json',
    };
  }

  parseResponse(body: unknown, native?: NativeApi): ChatCompletion {
    return native || (body as { type?: unknown } | null)?.type === 'message'
      ? this.claude.parseResponse(body)
      : this.gemini.parseResponse(body);
  }

  decodeStream(body: UpstreamBody, answer: StreamAnswer): StreamEvents {
    const onError = (status: number, error: unknown) => this.errorFromBody(status, error, {});
    return decodeSse(
      body,
      new PublisherStreamMapper(
        () => new AnthropicStreamMapper(onError),
        () => new GeminiStreamMapper(onError, answer.request.n ?? 1),
      ),
    );
  }

  buildEmbeddingRequest(request: EmbeddingRequest, target: CallTarget): UpstreamCall {
    const { model } = publisherOf(target.upstreamModel);
    return {
      path: vertexModelPath(this.config, 'google', model, 'predict'),
      headers: this.headers(false),
      body: JSON.stringify(toVertexEmbeddingBody(request)),
    };
  }

  parseEmbeddingResponse(body: unknown): EmbeddingResponse {
    const reply = fromVertexEmbeddings(body);
    if (!reply)
      throw new GatewayException(
        'upstream_error',
        `Backend "${this.backendId}" sent a malformed embeddings answer.`,
      );
    return reply;
  }

  mapError(status: number, body: string, headers: Headers): GatewayException {
    return this.errorFromBody(status, parseErrorBody(body), headers);
  }

  /**
   * Google's `{"error": {code, message, status}}` (what Vertex itself answers: 401 UNAUTHENTICATED, 429
   * RESOURCE_EXHAUSTED, 404 NOT_FOUND) or, from a Claude model, Anthropic's `{"type": "error", "error": {type,
   * message}}` -> the gateway's error for the status, scrubbed of the backend's tokens.
   */
  private errorFromBody(status: number, body: unknown, headers: Headers): GatewayException {
    const error = ((body as { error?: unknown } | undefined)?.error ?? {}) as {
      message?: unknown;
      status?: unknown;
      type?: unknown;
    };
    const type = typeof error.status === 'string' ? error.status : error.type;
    return mapUpstreamError({
      backendId: this.backendId,
      status,
      message: typeof error.message === 'string' ? error.message : undefined,
      type: typeof type === 'string' ? type : undefined,
      code: null,
      param: null,
      headers,
      secrets: [...backendSecrets(this.config), ...this.tokens.secrets()],
    });
  }
}

/**
 * Reads a stream with the mapper of the publisher that wrote it, known from its first event: Anthropic names
 * every event (`event: message_start`), Gemini's `streamGenerateContent` names none.
 */
class PublisherStreamMapper implements SseMapper {
  private mapper?: SseMapper;

  constructor(
    private readonly anthropic: () => SseMapper,
    private readonly gemini: () => SseMapper,
  ) {}

  map(event: SseEvent): StreamStep {
    this.mapper ??= event.event ? this.anthropic() : this.gemini();
    return this.mapper.map(event);
  }

  end(): StreamStep | undefined {
    return this.mapper?.end?.();
  }
}
