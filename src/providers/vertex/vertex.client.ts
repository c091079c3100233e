import { GatewayException } from '../../core/errors/gateway.exception';
import type { UpstreamCall } from '../../core/upstream-call';
import type { BackendLog } from '../provider-family';
import { AuthorisedClient, type Authorised } from '../shared/authorised-client';
import { jsonAnswer, sendInParts } from '../shared/split-calls';
import type { UpstreamResponse } from '../upstream-client';
import { untilAborted } from '../shared/until-aborted';
import type { AccessTokens } from './vertex-access-tokens';
import { TokenError } from './vertex-credentials';
import type { VertexBackendConfig } from './vertex.config';
import { joinedPredictions, predictParts } from './vertex.embeddings';

/**
 * The pooled HTTP client of every other family, with Google's OAuth: each call carries `Authorization: Bearer
 * <token>` from the backend's AccessTokens (fetched, kept and refreshed there). A token Vertex refuses (401) is
 * dropped, so the next call fetches a new one. An embeddings `:predict` with more instances than its model takes
 * at once goes as several calls, a few at a time, answered together in order (vertex.embeddings.ts, predictParts).
 */
export class VertexClient extends AuthorisedClient {
  constructor(
    private readonly backendId: string,
    config: VertexBackendConfig,
    private readonly tokens: AccessTokens,
    private readonly log: BackendLog,
  ) {
    super(backendId, config);
  }

  override async send(call: UpstreamCall, signal: AbortSignal): Promise<UpstreamResponse> {
    const parts = predictParts(call.path, call.body);
    if (!parts) return super.send(call, signal);
    const sent = await sendInParts(parts, (body) => super.send({ ...call, body }, signal));
    return 'failed' in sent ? sent.failed : jsonAnswer(joinedPredictions(sent.answers));
  }

  protected async authorise(call: UpstreamCall, signal: AbortSignal): Promise<Authorised> {
    // A request whose client leaves while the token is being fetched ends now; the fetch goes on for the others.
    const token = await untilAborted(this.token(), signal);
    return {
      headers: { ...call.headers, authorization: `Bearer ${token}` },
      answered: (response) => {
        if (response.status === 401) this.tokens.refused(token);
      },
    };
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
}
