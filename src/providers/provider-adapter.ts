import type { GatewayException } from '../core/errors/gateway.exception';
import type { ChatRequest } from '../core/chat-request';
import type { EmbeddingRequest, EmbeddingResponse } from '../core/embedding-request';
import type { ModelConfig } from '../config/config.schema';
import type { ChatCompletion } from '../core/openai-types';
import type { BackendClient, UpstreamBody } from './upstream-client';
import type { UpstreamCall } from '../core/upstream-call';
import type { JsonSource } from '../core/json-splice';
import type { NativeApi, StreamAnswer, StreamEvents } from './stream-events';

export type { UpstreamCall };
export type { NativeApi, StreamAnswer, StreamEvents, StreamStep } from './stream-events';

/** What the model being called needs the adapter to know. */
export interface CallTarget {
  upstreamModel: string;
  model: ModelConfig;
}

export interface NativeRequest {
  api: NativeApi;
  /** The client's JSON body, the model already replaced by the deployment's (its bytes, where copied from the client's). */
  body: string | Buffer;
  stream: boolean;
  /** The client's headers: the family forwards the ones its API defines (Anthropic: anthropic-version, anthropic-beta). */
  clientHeaders: Record<string, string | string[] | undefined>;
}

/**
 * The one interface every backend family implements (one folder per family under providers/): it builds the
 * upstream call, reads the answer and decodes the answer's stream from whatever its transport carries (SSE bytes,
 * a worker's messages) into canonical stream events. The relay, the client's encoders and the accounting only see
 * those, so a new family is a folder and a line in families.ts.
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
  /**
   * The upstream's 2xx body, read whole -> an OpenAI chat.completion (for a `native` call, the answer in the
   * client's own API read as chat, for the accounting: the client gets the body as it came).
   */
  parseResponse(body: unknown, native?: NativeApi): ChatCompletion;
  /** One streamed answer's body (what the family's client returned) -> its canonical events, batch by batch. */
  decodeStream(body: UpstreamBody, answer: StreamAnswer): StreamEvents;
  /** POST /v1/embeddings for this family, when it has an embeddings API (else embedding models cannot use it). */
  buildEmbeddingRequest?(request: EmbeddingRequest, target: CallTarget): UpstreamCall;
  /** The upstream's 2xx embeddings body -> OpenAI's embeddings list. */
  parseEmbeddingResponse?(body: unknown): EmbeddingResponse;
  /** The client APIs this family's backends speak themselves: requests in them pass through untranslated. */
  readonly nativeApis?: readonly NativeApi[];
  /**
   * Whether a model of this backend speaks `api` itself, for a family whose models differ (Bedrock: Claude speaks
   * Messages, Llama does not); every model of the backend does when absent.
   */
  speaksNatively?(api: NativeApi, upstreamModel: string): boolean;
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
