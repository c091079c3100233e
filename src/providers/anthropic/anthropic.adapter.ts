import type { ChatRequest } from '../../core/chat-request';
import type { AnthropicBackendConfig } from './anthropic.config';
import { GatewayException } from '../../core/errors/gateway.exception';
import type {
  CallTarget,
  NativeRequest,
  ProviderAdapter,
  StreamAnswer,
  StreamEvents,
  UpstreamCall,
} from '../provider-adapter';
import type { ChatCompletion } from '../../core/openai-types';
import { parseErrorBody } from '../../core/json';
import { backendSecrets, mapUpstreamError } from '../upstream-errors';
import { toAnthropicBody, validateForAnthropic } from './anthropic.request';
import { completionOfMessage } from './anthropic.response';
import { AnthropicStreamMapper } from './anthropic.stream';
import type { UpstreamBody } from '../upstream-client';
import { decodeSse } from '../shared/sse-decoder';

/** Anthropic's Messages API (`POST <baseUrl>/messages`, x-api-key + anthropic-version). */
export class AnthropicAdapter implements ProviderAdapter {
  readonly family = 'anthropic';
  readonly nativeApis = ['messages', 'messages.count_tokens'] as const;

  constructor(
    private readonly backendId: string,
    private readonly config: AnthropicBackendConfig,
  ) {}

  validate(request: ChatRequest, target: CallTarget): void {
    validateForAnthropic(request, target);
  }

  buildRequest(request: ChatRequest, target: CallTarget, stream: boolean): UpstreamCall {
    return {
      path: '/messages',
      headers: this.headers(stream),
      body: JSON.stringify(toAnthropicBody(request, target, stream)),
    };
  }

  /**
   * Messages (and count_tokens) from a Messages client go through as they came: the client's anthropic-version
   * and anthropic-beta (Claude Code's betas switch features on), the backend's key in place of the team token.
   */
  nativeCall(request: NativeRequest): UpstreamCall {
    const headers = this.headers(request.stream);
    const version = firstHeader(request.clientHeaders['anthropic-version']);
    const beta = request.clientHeaders['anthropic-beta'];
    if (version) headers['anthropic-version'] = version;
    if (beta) headers['anthropic-beta'] = Array.isArray(beta) ? beta.join(',') : beta;
    return {
      path: request.api === 'messages.count_tokens' ? '/messages/count_tokens' : '/messages',
      headers,
      body: request.body,
    };
  }

  private headers(stream: boolean): Record<string, string> {
    const headers: Record<string, string> = {
      ...this.config.headers,
      'content-type': 'application/json',
      accept: stream ? 'text/event-stream' : 'application/json',
      'anthropic-version': this.config.anthropicVersion,
    };
    if (this.config.apiKey) headers['x-api-key'] = this.config.apiKey;
    return headers;
  }

  parseResponse(body: unknown): ChatCompletion {
    return completionOfMessage(body, this.backendId);
  }

  /** Messages' SSE events, for a chat request and a native Messages call alike (the same events either way). */
  decodeStream(body: UpstreamBody, _answer: StreamAnswer): StreamEvents {
    return decodeSse(
      body,
      new AnthropicStreamMapper((status, error) => this.errorFromBody(status, error, {})),
    );
  }

  mapError(
    status: number,
    body: string,
    headers: Record<string, string | string[] | undefined>,
  ): GatewayException {
    return this.errorFromBody(status, parseErrorBody(body), headers);
  }

  /** `{"type":"error","error":{"type","message"}}` -> the gateway's error for that status. */
  private errorFromBody(
    status: number,
    body: unknown,
    headers: Record<string, string | string[] | undefined>,
  ): GatewayException {
    const error = ((body as { error?: unknown } | undefined)?.error ?? {}) as {
      type?: unknown;
      message?: unknown;
    };
    return mapUpstreamError({
      backendId: this.backendId,
      status,
      message: typeof error.message === 'string' ? error.message : undefined,
      type: typeof error.type === 'string' ? error.type : undefined,
      code: null,
      param: null,
      headers,
      secrets: backendSecrets(this.config),
    });
  }
}

function firstHeader(value: string | string[] | undefined): string | undefined {
  return Array.isArray(value) ? value[0] : value;
}
