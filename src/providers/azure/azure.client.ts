import type { UpstreamCall } from '../../core/upstream-call';
import type { BackendLog } from '../provider-family';
import { AuthorisedClient, type Authorised } from '../shared/authorised-client';
import { azureAuth, type AzureAuth } from './azure-credential';
import type { AzureBackendConfig } from './azure.config';

/** The pooled HTTP client of the other families, with Azure's authentication added to every call. */
export class AzureClient extends AuthorisedClient {
  private readonly auth: AzureAuth;

  constructor(backendId: string, config: AzureBackendConfig, log: BackendLog) {
    super(backendId, config);
    this.auth = azureAuth(backendId, config, log);
  }

  protected async authorise(call: UpstreamCall, signal: AbortSignal): Promise<Authorised> {
    return { headers: { ...call.headers, ...(await this.auth(signal)) } };
  }
}
