import { Sha256 } from '@aws-crypto/sha256-js';
import { SignatureV4 } from '@smithy/signature-v4';
import { GatewayException } from '../../core/errors/gateway.exception';
import type { UpstreamCall } from '../../core/upstream-call';
import type { BackendLog } from '../provider-family';
import { parseErrorBody } from '../../core/json';
import { AuthorisedClient, type Authorised } from '../shared/authorised-client';
import { textBody } from '../shared/split-calls';
import { replyError, type UpstreamBody, type UpstreamResponse } from '../upstream-client';
import { bedrockBaseUrl, type BedrockBackendConfig } from './bedrock.config';
import { credentialsOf, type BedrockCredentials } from './bedrock-credentials';
import { completeMessage } from './anthropic-shape';
import { COUNT_TOKENS_SUFFIX, INVOKE_SUFFIX } from './bedrock-paths';
import { isTitanBatch, sendTitanBatch } from './titan-batch';

/**
 * Bedrock Runtime over the gateway's pooled HTTP client: each call is signed with SigV4 for service `bedrock` in the
 * backend's region with the default credential chain's current credentials, or carries the backend's Bedrock API
 * key as a Bearer token. Signing covers the host, the date, the session token and the body's hash; the pooled
 * client sends exactly what was signed.
 */
export class BedrockClient extends AuthorisedClient {
  private readonly host: string;
  private readonly basePath: string;
  private readonly signer?: SignatureV4;
  private readonly credentials: BedrockCredentials;

  constructor(
    private readonly backendId: string,
    private readonly config: BedrockBackendConfig,
    private readonly log: BackendLog,
  ) {
    super(backendId, { ...config, baseUrl: bedrockBaseUrl(config) } as BedrockBackendConfig);
    const url = new URL(bedrockBaseUrl(config));
    this.host = url.host;
    this.basePath = url.pathname.replace(/\/+$/, '');
    this.credentials = credentialsOf(config);
    if (!config.apiKey) {
      this.signer = new SignatureV4({
        service: 'bedrock',
        region: config.region,
        credentials: () => this.resolveCredentials(),
        sha256: Sha256,
        uriEscapePath: true, // every service but S3: each path segment is escaped again for the canonical request
      });
    }
  }

  override async send(call: UpstreamCall, signal: AbortSignal): Promise<UpstreamResponse> {
    if (call.path.endsWith(INVOKE_SUFFIX) && isTitanBatch(call.body))
      return sendTitanBatch(call.body, (body) => this.sendOne({ ...call, body }, signal));
    return this.sendOne(call, signal);
  }

  private async sendOne(call: UpstreamCall, signal: AbortSignal): Promise<UpstreamResponse> {
    const response = await super.send(call, signal);
    try {
      if (call.path.endsWith(COUNT_TOKENS_SUFFIX)) return await this.countAnswer(response);
      if (call.path.endsWith(INVOKE_SUFFIX) && response.status >= 200 && response.status < 300)
        return await completedInvokeAnswer(response);
    } catch (error) {
      // Reading an answer the backend had started to send (cut, stalled, not JSON).
      throw replyError(this.backendId, error);
    }
    return response;
  }

  /** The call's headers with its authorisation: a Bearer API key, or a SigV4 signature over what is sent. */
  protected async authorise(call: UpstreamCall): Promise<Authorised> {
    const headers: Record<string, string> = { ...this.config.headers, ...call.headers, host: this.host };
    if (!this.signer) return { headers: { ...headers, authorization: `Bearer ${this.config.apiKey}` } };
    const signed = await this.signer.sign({
      method: 'POST',
      protocol: 'https:',
      hostname: this.host,
      path: this.basePath + call.path,
      query: {},
      headers,
      body: call.body,
    });
    return { headers: signed.headers };
  }

  private async resolveCredentials() {
    try {
      return await this.credentials.current();
    } catch (error) {
      // The chain's own words say which sources it tried; they hold no secret.
      this.log(`no AWS credentials from the default chain: ${(error as Error).message}`, 'error');
      throw new GatewayException(
        'upstream_auth_failed',
        `Backend "${this.backendId}" has no AWS credentials to sign with.`,
        { deploymentFault: true },
      );
    }
  }

  /**
   * CountTokens answers `{"inputTokens": n}`; the gateway reads Anthropic's `{"input_tokens": n}`. A model Bedrock
   * cannot count for (it answers 400 or 404) leaves the count to the gateway's tokenizer: an empty answer.
   */
  private async countAnswer(response: UpstreamResponse): Promise<UpstreamResponse> {
    const text = await response.body.text();
    let tokens: unknown;
    if (response.status >= 200 && response.status < 300) {
      tokens = (parseErrorBody(text) as { inputTokens?: unknown } | undefined)?.inputTokens;
    } else {
      this.log(`CountTokens failed with HTTP ${response.status}: counted by the gateway instead`, 'warn');
    }
    const json = typeof tokens === 'number' ? { input_tokens: tokens } : {};
    return { status: 200, headers: { 'content-type': 'application/json' }, body: jsonBody(json) };
  }
}

/**
 * InvokeModel's 2xx answer: a Claude Message completed to Anthropic's published shape (anthropic-shape.ts), which
 * the adapter reads as chat and a native Messages client gets as its answer; anything else (embeddings) as it came.
 */
async function completedInvokeAnswer(response: UpstreamResponse): Promise<UpstreamResponse> {
  const text = await response.body.text();
  let answer: unknown;
  try {
    answer = JSON.parse(text);
  } catch {
    return { ...response, body: textBody(text) }; // the adapter reports the malformed answer
  }
  const message = answer as Record<string, unknown> | null;
  if (message?.type === 'message') completeMessage(message);
  return { ...response, body: jsonBody(answer) };
}

/** A body the client made itself (an answer it rewrote). */
export function jsonBody(value: unknown): UpstreamBody {
  return textBody(JSON.stringify(value));
}
