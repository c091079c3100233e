import type { UpstreamCall } from '../../core/upstream-call';
import type { BackendLog } from '../provider-family';
import { UpstreamClient, type BackendClient, type UpstreamResponse } from '../upstream-client';
import { azureAuth, type AzureAuth } from './azure-credential';
import type { AzureBackendConfig } from './azure.config';

/** The pooled HTTP client of the other families, with Azure's authentication added to every call. */
export class AzureClient implements BackendClient {
  private readonly http: UpstreamClient;
  private readonly auth: AzureAuth;

  constructor(backendId: string, config: AzureBackendConfig, log: BackendLog) {
    this.http = new UpstreamClient(backendId, config);
    this.auth = azureAuth(backendId, config, log);
  }

  async send(call: UpstreamCall, signal: AbortSignal): Promise<UpstreamResponse> {
    const auth = await this.auth(signal);
    return this.http.send({ ...call, headers: { ...call.headers, ...auth } }, signal);
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
