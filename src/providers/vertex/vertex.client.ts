import { GatewayException } from '../../core/errors/gateway.exception';
import type { UpstreamCall } from '../../core/upstream-call';
import type { BackendLog } from '../provider-family';
import { UpstreamClient, type BackendClient, type UpstreamResponse } from '../upstream-client';
import type { AccessTokens } from './vertex-access-tokens';
import { TokenError } from './vertex-credentials';
import type { VertexBackendConfig } from './vertex.config';

/**
 * The pooled HTTP client of every other family, with Google's OAuth: each call carries `Authorization: Bearer
 * <token>` from the backend's AccessTokens (fetched, kept and refreshed there). A token Vertex refuses (401) is
 * dropped, so the next call fetches a new one.
 */
export class VertexClient implements BackendClient {
  private readonly http: UpstreamClient;

  constructor(
    private readonly backendId: string,
    config: VertexBackendConfig,
    private readonly tokens: AccessTokens,
    private readonly log: BackendLog,
  ) {
    this.http = new UpstreamClient(backendId, config);
  }

  async send(call: UpstreamCall, signal: AbortSignal): Promise<UpstreamResponse> {
    // A request whose client leaves while the token is being fetched ends now; the fetch goes on for the others.
    const token = await untilAborted(this.token(), signal);
    const response = await this.http.send(
      { ...call, headers: { ...call.headers, authorization: `Bearer ${token}` } },
      signal,
    );
    if (response.status === 401) this.tokens.refused(token);
    return response;
  }

  private async token(): Promise<string> {
    try {
      return await this.tokens.token();
    } catch (error) {
      const reason = error instanceof TokenError ? error.message : 'the token could not be had';
      this.log(`no Google access token: ${reason}`, 'error');
      if (error instanceof TokenError && error.kind === 'refused')
        throw new GatewayException(
          'upstream_auth_failed',
          `Backend "${this.backendId}" could not get a Google access token.`,
          { deploymentFault: true },
        );
      throw new GatewayException(
        'upstream_unreachable',
        `Backend "${this.backendId}" could not get a Google access token.`,
      );
    }
  }

  /** A credentials file that cannot work (missing, not JSON, no RSA key): its models answer 403 model_unavailable. */
  unusable(): string | undefined {
    return this.tokens.problem;
  }

  transportError(error: unknown): unknown {
    return this.http.transportError(error);
  }

  inFlight(): number {
    return this.http.inFlight();
  }

  probe(timeoutMs: number): Promise<string | undefined> {
    return this.http.probe(timeoutMs);
  }

  close(): Promise<void> {
    return this.http.close();
  }
}

/** `work`'s result, or the signal's reason as soon as it aborts. */
function untilAborted<T>(work: Promise<T>, signal: AbortSignal): Promise<T> {
  if (signal.aborted) return Promise.reject(signal.reason as Error);
  return new Promise<T>((resolve, reject) => {
    const abort = () => reject(signal.reason as Error);
    signal.addEventListener('abort', abort, { once: true });
    work.then(resolve, reject).finally(() => signal.removeEventListener('abort', abort));
  });
}
