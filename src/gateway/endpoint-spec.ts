import type { IncomingHttpHeaders, ServerResponse } from 'node:http';
import type { Principal } from '../auth/principal';
import type { ChatRequest } from '../core/chat-request';
import type { EmbeddingRequest, EmbeddingResponse } from '../core/embedding-request';
import type { ErrorShape } from '../core/errors/error-shape';
import type { JsonSource } from '../core/json-splice';
import type { ChatCompletion } from '../core/openai-types';
import type { UpstreamCall } from '../providers/provider-adapter';
import type { Deployment } from '../routing/model-router.service';
import type { PromptTexts } from '../usage/token-estimator';
import type { ClientWire } from './client-wire';
import type { Endpoint } from './exchange';

/** Where an endpoint answers and how its errors look: what is known of it before its handler runs. */
export interface EndpointRoute {
  /** The path it answers on; its sub-paths (GET /v1/responses/{id}, /v1/messages/count_tokens) answer errors alike. */
  readonly path: string;
  readonly errors: ErrorShape;
  /** The client's JSON bytes are kept (req.rawBody) for deployments that forward or copy them. */
  readonly keepsClientBytes: boolean;
  /** Its name on usage records; undefined for a route that is not billed (count_tokens). */
  readonly billedAs: Endpoint | undefined;
}

/** What the client sent besides the validated body. */
export interface ClientCall {
  caller: Principal;
  headers: IncomingHttpHeaders;
  /** The client's own JSON body, when its route keeps it. */
  source?: JsonSource;
  /** The response, for headers an endpoint adds of its own (x-switchyard-dropped-tools, x-switchyard-token-count). */
  response: ServerResponse;
}

/**
 * One client API as the pipeline serves it (gateway/pipeline.ts): where it answers, how its errors look, and how a
 * request to it reads (`open`): what it asks a model for, what it reserves, whether a family takes it natively,
 * how the answer is written. Everything else (routing, admission, calls, retries, fallbacks, accounting, errors)
 * is the pipeline's, the same for every endpoint.
 */
export interface EndpointSpec<Body> extends EndpointRoute {
  /** A response header that carries the request id in this API's own name (Anthropic's `request-id`). */
  readonly requestIdHeader?: string;
  open(body: Body, client: ClientCall): Served | Promise<Served>;
}

/** A request as its endpoint describes it to the pipeline, by what it asks a model for. */
export type Served = ChatServed | EmbeddingServed | CountServed;

/** A whole (non-streamed) chat answer: the OpenAI completion it maps to, and the backend's own body for a native call. */
export interface Answer {
  completion: ChatCompletion;
  /** The upstream's 2xx body as it came (the client's own format when `native`). */
  upstreamBody: unknown;
  native: boolean;
  /** The backend that answered. */
  backendId: string;
}

/** A completion (chat completions, Messages, Responses): streamed, or answered whole. */
export interface ChatServed {
  kind: 'chat';
  request: ChatRequest;
  wire: ClientWire;
  /** The body the client gets for a whole answer (may store it first: the Responses API). */
  reply(answer: Answer): unknown;
}

export interface EmbeddingServed {
  kind: 'embedding';
  request: EmbeddingRequest;
  /** The inputs as the token counter reads them; `exactTokens` when they were token arrays already. */
  prompt: PromptTexts;
  exactTokens: number | undefined;
  reply(reply: EmbeddingResponse): unknown;
}

/**
 * Counting a prompt's tokens (Anthropic's count_tokens): routed and checked like a completion, not admitted or
 * billed (Anthropic does not charge for it), asked of the first deployment when it counts natively, else counted
 * by the gateway's tokenizer.
 */
export interface CountServed {
  kind: 'count';
  model: string;
  /** The prompt as the gateway's tokenizer counts it, made only when no deployment counts it natively. */
  prompt(): PromptTexts;
  /** The deployment's own count call, when its family counts this API's prompts. */
  nativeCall(deployment: Deployment): UpstreamCall | undefined;
  reply(count: { tokens: number; estimated: boolean }): unknown;
}
