import type { AwsCredentialIdentity, AwsCredentialIdentityProvider } from '@smithy/types';
import { backendSecrets } from '../upstream-errors';
import type { BedrockBackendConfig } from './bedrock.config';

/**
 * A backend's AWS credentials: the default credential chain (environment, shared profile, web identity as on EKS,
 * container and instance metadata), memoized by the SDK and refreshed before temporary credentials expire, one chain
 * per backend. The last credentials used are kept only so error texts can be scrubbed of them (a signature error
 * echoes the canonical request, session token included); they are never logged.
 */
export class BedrockCredentials {
  private provider?: Promise<AwsCredentialIdentityProvider>;
  private last?: AwsCredentialIdentity;

  constructor(private readonly config: BedrockBackendConfig) {}

  async current(): Promise<AwsCredentialIdentity> {
    // The SDK's chain is loaded by the first signed call, not at boot (docs/performance.md, the process at rest).
    this.provider ??= import('@aws-sdk/credential-providers').then(({ fromNodeProviderChain }) =>
      fromNodeProviderChain(),
    );
    this.last = await (await this.provider)();
    return this.last;
  }

  /** Every string of this backend that must never reach a client, a log or a metric. */
  secrets(): string[] {
    const secrets = backendSecrets(this.config);
    if (this.last) {
      secrets.push(this.last.accessKeyId, this.last.secretAccessKey);
      if (this.last.sessionToken) secrets.push(this.last.sessionToken);
    }
    return secrets;
  }
}

const perBackend = new WeakMap<BedrockBackendConfig, BedrockCredentials>();

/** The one credential holder of a backend (its adapter scrubs errors with what its client signs with). */
export function credentialsOf(config: BedrockBackendConfig): BedrockCredentials {
  let holder = perBackend.get(config);
  if (!holder) perBackend.set(config, (holder = new BedrockCredentials(config)));
  return holder;
}
