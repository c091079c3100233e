import type { ChatRequest } from '../../core/chat-request';
import type { BackendConfig } from '../../config/config.schema';
import { GatewayException } from '../../core/errors/gateway.exception';
import type {
  CallTarget,
  ProviderAdapter,
  StreamAnswer,
  StreamEvents,
  UpstreamCall,
} from '../provider-adapter';
import type { UpstreamBody } from '../upstream-client';
import { decodeSse } from '../shared/sse-decoder';
import type { ChatCompletion } from '../../core/openai-types';
import { parseErrorBody } from '../../core/json';
import { backendSecrets, mapUpstreamError } from '../upstream-errors';
import { toGeminiBody, validateForGemini } from './gemini.request';
import {
  blockedCandidates,
  finishReasonOf,
  splitParts,
  usageOf,
  type GeminiResponse,
} from './gemini.response';
import { randomId } from '../../core/random-id';
import { GeminiStreamMapper } from './gemini.stream';
import type { EmbeddingRequest, EmbeddingResponse } from '../../core/embedding-request';
import { fromGeminiEmbeddings, toGeminiEmbeddingBody } from './gemini.embeddings';

/** Google's Generative Language API (`<baseUrl>/models/<model>:generateContent`, x-goog-api-key). */
export class GeminiAdapter implements ProviderAdapter {
  readonly family = 'gemini';

  constructor(
    private readonly backendId: string,
    private readonly config: BackendConfig,
  ) {}

  validate(request: ChatRequest, target: CallTarget): void {
    validateForGemini(request, target);
  }

  buildRequest(request: ChatRequest, target: CallTarget, stream: boolean): UpstreamCall {
    const model = encodeURIComponent(target.upstreamModel);
    const path = stream
      ? `/models/${model}:streamGenerateContent?alt=sse`
      : `/models/${model}:generateContent`;
    return { path, headers: this.headers(stream), body: JSON.stringify(toGeminiBody(request, target)) };
  }

  buildEmbeddingRequest(request: EmbeddingRequest, target: CallTarget): UpstreamCall {
    const body = toGeminiEmbeddingBody(request, target.upstreamModel);
    return {
      path: `/models/${encodeURIComponent(target.upstreamModel)}:batchEmbedContents`,
      headers: this.headers(false),
      body: JSON.stringify(body),
    };
  }

  parseEmbeddingResponse(body: unknown): EmbeddingResponse {
    const reply = fromGeminiEmbeddings(body);
    if (!reply)
      throw new GatewayException(
        'upstream_error',
        `Backend "${this.backendId}" sent a malformed embeddings answer.`,
      );
    return reply;
  }

  private headers(stream: boolean): Record<string, string> {
    const headers: Record<string, string> = {
      ...this.config.headers,
      'content-type': 'application/json',
      accept: stream ? 'text/event-stream' : 'application/json',
    };
    if (this.config.apiKey) headers['x-goog-api-key'] = this.config.apiKey;
    return headers;
  }

  parseResponse(body: unknown): ChatCompletion {
    const reply = body as GeminiResponse | null;
    const candidates =
      reply && typeof reply === 'object' ? (blockedCandidates(reply, 1) ?? reply.candidates) : undefined;
    if (!reply || !Array.isArray(candidates)) {
      throw new GatewayException('upstream_error', `Backend "${this.backendId}" sent a malformed response.`);
    }
    const choices = candidates.map((candidate, position) => {
      const index = Number(candidate.index ?? position);
      const { text, reasoning, toolCalls } = splitParts(candidate.content?.parts ?? []);
      const message: Record<string, unknown> = {
        role: 'assistant',
        content: text || (toolCalls.length ? null : ''),
        refusal: null,
      };
      if (reasoning) message.reasoning_content = reasoning;
      if (toolCalls.length) message.tool_calls = toolCalls;
      return {
        index,
        message,
        finish_reason: finishReasonOf(candidate.finishReason, toolCalls.length > 0) ?? 'stop',
        logprobs: null,
      };
    });
    return {
      id: reply.responseId ? `chatcmpl-${reply.responseId}` : randomId('chatcmpl-', 29),
      object: 'chat.completion',
      created: Math.floor(Date.now() / 1000),
      model: String(reply.modelVersion ?? ''),
      choices,
      usage: usageOf(reply.usageMetadata ?? {}),
    };
  }

  /** `streamGenerateContent?alt=sse`: SSE, with no end marker (see GeminiStreamMapper). */
  decodeStream(body: UpstreamBody, answer: StreamAnswer): StreamEvents {
    return decodeSse(
      body,
      new GeminiStreamMapper((status, error) => this.errorFromBody(status, error, {}), answer.request.n ?? 1),
    );
  }

  mapError(
    status: number,
    body: string,
    headers: Record<string, string | string[] | undefined>,
  ): GatewayException {
    return this.errorFromBody(status, parseErrorBody(body), headers);
  }

  /** Google's `{"error": {code, message, status}}` -> the gateway's error for that status. */
  private errorFromBody(
    status: number,
    body: unknown,
    headers: Record<string, string | string[] | undefined>,
  ): GatewayException {
    const error = ((body as { error?: unknown } | undefined)?.error ?? {}) as {
      message?: unknown;
      status?: unknown;
    };
    return mapUpstreamError({
      backendId: this.backendId,
      status,
      message: typeof error.message === 'string' ? error.message : undefined,
      type: typeof error.status === 'string' ? error.status : undefined,
      code: null,
      param: null,
      headers,
      secrets: backendSecrets(this.config),
    });
  }
}
