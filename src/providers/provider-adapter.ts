import type { GatewayException } from '../core/errors/gateway.exception';
import type { ChatRequest } from '../core/chat-request';
import type { EmbeddingRequest, EmbeddingResponse } from '../core/embedding-request';
import type { ModelConfig } from '../config/config.schema';
import type { ChatCompletion, ChatCompletionChunk } from '../core/openai-types';
import type { BackendClient } from './upstream-client';
import type { UpstreamCall } from '../core/upstream-call';
import type { SseEvent } from '../core/sse';
import type { JsonSource } from '../core/json-splice';
import type { ContentDelta } from '../core/delta-template';

export type { UpstreamCall };

/** What the model being called needs the adapter to know. */
export interface CallTarget {
  upstreamModel: string;
  model: ModelConfig;
}

/** A client's request in an API some family speaks itself (passed through, not translated). */
export type NativeApi = 'messages' | 'messages.count_tokens' | 'responses';

export interface NativeRequest {
  api: NativeApi;
  /** The client's JSON body, the model already replaced by the deployment's (its bytes, where copied from the client's). */
  body: string | Buffer;
  stream: boolean;
  /** The client's headers: the family forwards the ones its API defines (Anthropic: anthropic-version, anthropic-beta). */
  clientHeaders: Record<string, string | string[] | undefined>;
}

/** The result of mapping one upstream stream event. */
export interface StreamStep {
  chunks: ChatCompletionChunk[];
  /** The upstream said the stream is complete. */
  done?: boolean;
  /**
   * The upstream event's JSON text when it already is the single chunk in `chunks`, unchanged (OpenAI-
   * compatible upstreams): the relay may send it as is instead of serialising the chunk again.
   */
  raw?: string;
  /**
   * Set when the event is an ordinary content delta read without parsing it (shared/delta-template.ts): the relay
   * and the OpenAI encoder use this; `chunks` is then parsed only if something else asks for it.
   */
  delta?: ContentDelta;
}

/** Stateful per stream: some vendors spread one OpenAI chunk's facts over several events. */
export interface StreamMapper {
  /** Throws a GatewayException when the upstream reports an error inside the stream. */
  map(event: SseEvent): StreamStep;
  /**
   * The upstream's body ended before a step said `done`: what the mapper still holds for the client and the
   * accounting, if anything (Gemini: the usage of an answer some of whose candidates never finished).
   */
  end?(): StreamStep | undefined;
}

/**
 * The one interface every backend family implements (one folder per family under
 * providers/). It only translates; the HTTP call, the relay and the accounting are
 * shared, so a new family is a new adapter and nothing else.
 */
export interface ProviderAdapter {
  /** The model family, shown in GET /v1/models (`openai`, `anthropic`, `gemini`). */
  readonly family: string;
  /** Vendor rules checked before any upstream call; throws a 400 that names the rule. */
  validate?(request: ChatRequest, target: CallTarget): void;
  /**
   * The upstream call for a chat request. `source` is the client's own body when the request arrived as a chat
   * completion: a family that passes requests through may copy its unchanged parts (shared/json-splice.ts).
   */
  buildRequest(request: ChatRequest, target: CallTarget, stream: boolean, source?: JsonSource): UpstreamCall;
  /** The upstream's 2xx JSON body -> an OpenAI chat.completion. */
  parseResponse(body: unknown): ChatCompletion;
  /**
   * The mapper for one streamed answer to `request` (a family whose stream has no end marker, Gemini, reads how
   * many choices to wait for from it).
   */
  createStreamMapper(request?: ChatRequest): StreamMapper;
  /** POST /v1/embeddings for this family, when it has an embeddings API (else embedding models cannot use it). */
  buildEmbeddingRequest?(request: EmbeddingRequest, target: CallTarget): UpstreamCall;
  /** The upstream's 2xx embeddings body -> OpenAI's embeddings list. */
  parseEmbeddingResponse?(body: unknown): EmbeddingResponse;
  /** The client APIs this family's backends speak themselves: requests in them pass through untranslated. */
  readonly nativeApis?: readonly NativeApi[];
  /** The call for a request in one of `nativeApis`. */
  nativeCall?(request: NativeRequest): UpstreamCall;
  /** An upstream non-2xx answer -> the error the client gets. */
  mapError(
    status: number,
    body: string,
    headers: Record<string, string | string[] | undefined>,
  ): GatewayException;
}

/** A configured backend: its id, its adapter and its pooled HTTP client. */
export interface Backend {
  id: string;
  adapter: ProviderAdapter;
  client: BackendClient;
  /** Why this backend cannot answer at all (e.g. it needs an API key and has none); its models are unavailable. */
  unavailable?: string;
}

/** Injection token: Map<backendId, Backend>. */
export const BACKENDS = Symbol('BACKENDS');
