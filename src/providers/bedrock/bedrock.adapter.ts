import type { ChatRequest } from '../../core/chat-request';
import type { EmbeddingRequest, EmbeddingResponse } from '../../core/embedding-request';
import { GatewayException } from '../../core/errors/gateway.exception';
import type { ChatCompletion } from '../../core/openai-types';
import { spliceJson } from '../../core/json-splice';
import { validateForAnthropic } from '../anthropic/anthropic.request';
import { completionOfMessage } from '../anthropic/anthropic.response';
import { AnthropicStreamMapper } from '../anthropic/anthropic.stream';
import type {
  CallTarget,
  NativeApi,
  NativeRequest,
  ProviderAdapter,
  StreamAnswer,
  StreamEvents,
  UpstreamCall,
} from '../provider-adapter';
import type { SseMapper } from '../shared/sse-decoder';
import type { UpstreamBody } from '../upstream-client';
import { bedrockBetas, countTokensBody, invokeBody, translatedInvokeBody } from './bedrock-anthropic';
import type { BedrockBackendConfig } from './bedrock.config';
import { credentialsOf, type BedrockCredentials } from './bedrock-credentials';
import { embeddingBody, embeddingsOf } from './bedrock.embeddings';
import { bedrockHttpError, bedrockStatusError, bedrockStreamException } from './bedrock.errors';
import { isAnthropicModel, modelPath } from './bedrock-paths';
import { decodeBedrockStream } from './bedrock.stream';
import { toConverseBody, validateForConverse } from './converse.request';
import { converseCompletion, isConverseAnswer } from './converse.response';
import { ConverseStreamMapper } from './converse.stream';

const JSON_TYPE = 'application/json';
const EVENT_STREAM_TYPE = 'application/vnd.amazon.eventstream';

/**
 * AWS Bedrock Runtime. Anthropic models take the Messages body through InvokeModel (`/invoke`,
 * `/invoke-with-response-stream`): a Messages client's own body natively, a chat request as the Anthropic family
 * translates it. Every other chat model goes through Converse (`/converse`, `/converse-stream`). Embedding models
 * (Titan Text Embeddings, Cohere Embed) through InvokeModel. Auth is the client's (bedrock-client.ts).
 */
export class BedrockAdapter implements ProviderAdapter {
  readonly family = 'bedrock';
  readonly nativeApis = ['messages', 'messages.count_tokens'] as const;
  private readonly credentials: BedrockCredentials;

  constructor(
    private readonly backendId: string,
    private readonly config: BedrockBackendConfig,
  ) {
    this.credentials = credentialsOf(config);
  }

  /** Only its Anthropic models speak Messages; a Messages request to another model is translated to Converse. */
  speaksNatively(_api: NativeApi, upstreamModel: string): boolean {
    return isAnthropicModel(upstreamModel, this.config);
  }

  validate(request: ChatRequest, target: CallTarget): void {
    if (isAnthropicModel(target.upstreamModel, this.config)) validateForAnthropic(request, target);
    else validateForConverse(request);
  }

  buildRequest(request: ChatRequest, target: CallTarget, stream: boolean): UpstreamCall {
    if (isAnthropicModel(target.upstreamModel, this.config)) {
      return {
        path: modelPath(target.upstreamModel, stream ? 'invoke-with-response-stream' : 'invoke'),
        headers: headers(stream),
        body: JSON.stringify(translatedInvokeBody(request, target)),
      };
    }
    return {
      path: modelPath(target.upstreamModel, stream ? 'converse-stream' : 'converse'),
      headers: headers(stream),
      body: JSON.stringify(toConverseBody(request, target)),
    };
  }

  /**
   * A Messages client's request (or count) as InvokeModel's (CountTokens'): the model moves to the path, the body
   * keeps what Bedrock takes unchanged (thinking signatures included), the client's anthropic-beta header becomes
   * `anthropic_beta`, only the flags Bedrock accepts.
   */
  nativeCall(request: NativeRequest): UpstreamCall {
    const bytes = typeof request.body === 'string' ? Buffer.from(request.body) : request.body;
    const parsed = JSON.parse(bytes.toString('utf8')) as Record<string, unknown>;
    const model = String(parsed.model);
    const betas = bedrockBetas(request.clientHeaders['anthropic-beta']);
    if (request.api === 'messages.count_tokens') {
      return {
        path: modelPath(model, 'count-tokens'),
        headers: headers(false),
        body: countTokensBody(parsed, betas),
      };
    }
    // The members kept go as the client's own bytes (a big body is not serialised again: core/json-splice.ts).
    const body = invokeBody(parsed, betas);
    return {
      path: modelPath(model, request.stream ? 'invoke-with-response-stream' : 'invoke'),
      headers: headers(request.stream),
      body: spliceJson({ bytes, parsed }, body) ?? JSON.stringify(body),
    };
  }

  parseResponse(body: unknown): ChatCompletion {
    if (isConverseAnswer(body)) return converseCompletion(body as Parameters<typeof converseCompletion>[0]);
    return completionOfMessage(body, this.backendId);
  }

  /** Event-stream frames: InvokeModel's `chunk`s (Anthropic events) or ConverseStream's events, told by the frame. */
  decodeStream(body: UpstreamBody, answer: StreamAnswer): StreamEvents {
    const secrets = () => this.credentials.secrets();
    // An Anthropic `error` event inside a chunk: the status its type stands for (the Anthropic family's table).
    const anthropic = new AnthropicStreamMapper((status, error) =>
      bedrockStatusError(this.backendId, status, anthropicMessage(error), secrets()),
    );
    let converse: SseMapper | undefined;
    return decodeBedrockStream(body, {
      anthropic,
      converse: () => (converse ??= new ConverseStreamMapper(answer.request.model)),
      exception: (type, message) => bedrockStreamException(this.backendId, type, message, secrets()),
      malformed: (what) =>
        new GatewayException(
          'upstream_error',
          `Backend "${this.backendId}" sent a malformed stream (${what})`,
        ),
    });
  }

  buildEmbeddingRequest(request: EmbeddingRequest, target: CallTarget): UpstreamCall {
    return {
      path: modelPath(target.upstreamModel, 'invoke'),
      headers: headers(false),
      body: JSON.stringify(embeddingBody(request, target.upstreamModel)),
    };
  }

  parseEmbeddingResponse(body: unknown): EmbeddingResponse {
    const reply = embeddingsOf(body);
    if (!reply)
      throw new GatewayException(
        'upstream_error',
        `Backend "${this.backendId}" sent a malformed embeddings answer.`,
      );
    return reply;
  }

  mapError(
    status: number,
    body: string,
    responseHeaders: Record<string, string | string[] | undefined>,
  ): GatewayException {
    return bedrockHttpError(this.backendId, status, body, responseHeaders, this.credentials.secrets());
  }
}

function headers(stream: boolean): Record<string, string> {
  return { 'content-type': JSON_TYPE, accept: stream ? EVENT_STREAM_TYPE : JSON_TYPE };
}

function anthropicMessage(error: unknown): string | undefined {
  const message = (error as { error?: { message?: unknown } } | undefined)?.error?.message;
  return typeof message === 'string' ? message : undefined;
}
