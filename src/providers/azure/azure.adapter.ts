import type { ChatRequest } from '../../core/chat-request';
import type { EmbeddingRequest, EmbeddingResponse } from '../../core/embedding-request';
import type { ChatCompletion } from '../../core/openai-types';
import { parseErrorBody } from '../../core/json';
import type { JsonSource } from '../../core/json-splice';
import type { GatewayException } from '../../core/errors/gateway.exception';
import type {
  CallTarget,
  NativeApi,
  NativeRequest,
  ProviderAdapter,
  StreamAnswer,
  StreamEvents,
  UpstreamCall,
} from '../provider-adapter';
import { mapUpstreamError } from '../upstream-errors';
import type { UpstreamBody } from '../upstream-client';
import { OpenAIAdapter } from '../openai/openai.adapter';
import { ResponsesStreamMapper } from '../openai/responses-upstream';
import { decodeSse } from '../shared/sse-decoder';
import { AzureChunkMapper, withoutFilterResults } from './azure-content-filter';
import { azurePath, isAzureOperation, V1 } from './azure-routes';
import { azureSecrets, scrubAzure, scrubAzureError } from './azure-secrets';
import type { AzureBackendConfig } from './azure.config';

/**
 * Azure OpenAI speaks OpenAI's wire, so the OpenAI family builds and reads every call; this adapter moves each call
 * to Azure's path for the configured api version, leaves authentication to its client (api-key header or an Entra
 * token, azure.client.ts), removes the content filter's annotations and reads Azure's error bodies.
 */
export class AzureAdapter implements ProviderAdapter {
  readonly family = 'azure';
  private readonly openai: OpenAIAdapter;

  constructor(
    private readonly backendId: string,
    private readonly config: AzureBackendConfig,
  ) {
    // No key for the OpenAI adapter: it would send it as `Authorization: Bearer`, which Azure reads as an Entra
    // token. The client adds the credential Azure expects.
    this.openai = new OpenAIAdapter(backendId, {
      ...config,
      apiKey: undefined,
      responsesApi: config.apiVersion === V1,
      reachedOverHttp: () => true,
    });
  }

  /** Azure serves the Responses API on v1 only; with a dated version Responses requests are translated to chat. */
  get nativeApis(): readonly NativeApi[] {
    return this.openai.nativeApis;
  }

  nativeCall(request: NativeRequest): UpstreamCall {
    // The body already names the deployment as its model (the v1 form).
    return this.onAzure(this.openai.nativeCall(request), '');
  }

  buildRequest(request: ChatRequest, target: CallTarget, stream: boolean, source?: JsonSource): UpstreamCall {
    return this.onAzure(this.openai.buildRequest(request, target, stream, source), target.upstreamModel);
  }

  parseResponse(body: unknown, native?: NativeApi): ChatCompletion {
    const completion = this.openai.parseResponse(body, native);
    return native ? completion : withoutFilterResults(completion);
  }

  decodeStream(body: UpstreamBody, answer: StreamAnswer): StreamEvents {
    const mapper =
      answer.native === 'responses'
        ? new ResponsesStreamMapper(this.backendId)
        : new AzureChunkMapper(this.openai.chunkMapper(), this.backendId);
    // In-band errors with Azure's secrets and any token scrubbed, before the relay sees them.
    return decodeSse(body, {
      map: (event) => {
        try {
          return mapper.map(event);
        } catch (error) {
          throw scrubAzureError(error, this.config);
        }
      },
    });
  }

  buildEmbeddingRequest(request: EmbeddingRequest, target: CallTarget): UpstreamCall {
    return this.onAzure(this.openai.buildEmbeddingRequest(request, target), target.upstreamModel);
  }

  parseEmbeddingResponse(body: unknown): EmbeddingResponse {
    return this.openai.parseEmbeddingResponse(body);
  }

  /**
   * Azure's `{error: {code, message, param, innererror}}`. A content filter refusing the prompt (400
   * `content_filter`) stays the client's 400 with that code and Azure's words (not retried elsewhere: the same prompt
   * meets the same filter); numeric codes ("429", "401") are Azure's status again, not a code a client knows.
   */
  mapError(
    status: number,
    body: string,
    headers: Record<string, string | string[] | undefined>,
  ): GatewayException {
    const root = (parseErrorBody(body) ?? {}) as Record<string, unknown>;
    const error = (typeof root.error === 'object' && root.error ? root.error : root) as Record<
      string,
      unknown
    >;
    const text = (value: unknown) => (typeof value === 'string' ? scrubAzure(value, this.config) : undefined);
    const code = text(error.code);
    return mapUpstreamError({
      backendId: this.backendId,
      status,
      message: text(error.message),
      type: text(error.type),
      code: code === undefined || /^\d+$/.test(code) ? null : code,
      param: text(error.param) ?? null,
      headers,
      secrets: azureSecrets(this.config),
    });
  }

  /** The OpenAI family's call, at Azure's path for this backend's api version. */
  private onAzure(call: UpstreamCall, deployment: string): UpstreamCall {
    if (!isAzureOperation(call.path)) throw new Error(`no Azure route for ${call.path}`);
    return { ...call, path: azurePath(this.config.apiVersion, call.path, deployment) };
  }
}
