import type * as AzureIdentity from '@azure/identity';
import { GatewayException } from '../../core/errors/gateway.exception';
import type { BackendLog } from '../provider-family';
import { untilAborted } from '../shared/until-aborted';
import type { AzureBackendConfig, EntraConfig } from './azure.config';
import { scrubAzure } from './azure-secrets';

/** The scope of Azure OpenAI's (Cognitive Services') data plane. */
export const AZURE_OPENAI_SCOPE = 'https://cognitiveservices.azure.com/.default';

/** How a call to an azure backend proves who sends it: the headers Azure reads. */
export type AzureAuth = (signal: AbortSignal) => Promise<Record<string, string>>;

/** `api-key: <key>`, or an Entra ID bearer token; a backend with neither sends none (its models are unavailable). */
export function azureAuth(backendId: string, config: AzureBackendConfig, log: BackendLog): AzureAuth {
  if (config.entra) return entraAuth(backendId, config.entra, config, log);
  const headers: Record<string, string> = config.apiKey ? { 'api-key': config.apiKey } : {};
  return () => Promise.resolve(headers);
}

/**
 * Tokens from Entra ID (client credentials: the app's id and secret). @azure/identity does the caching and the
 * refreshing: its MSAL cache keeps the token, and getBearerTokenProvider's token cycler hands out the one it holds,
 * starts a refresh (one at a time) two minutes before it expires and waits for one only in the last second, so
 * requests almost never wait for Entra. A request never waits for a token past its own deadline or abort.
 *
 * The library (~270 modules, ~30 MB resident) is loaded when a backend signs in with Entra, not by every
 * gateway at boot (docs/performance.md, the process at rest).
 */
function entraAuth(
  backendId: string,
  entra: EntraConfig,
  config: AzureBackendConfig,
  log: BackendLog,
): AzureAuth {
  const identity = import('@azure/identity');
  const tokens = identity.then((library) => entraTokens(library, entra));
  tokens.catch(() => undefined); // a failed load is each request's error below, not an unhandled rejection
  return async (signal) => {
    try {
      const token = await tokens;
      return { authorization: `Bearer ${await untilAborted(token(), signal)}` };
    } catch (error) {
      if (signal.aborted && error === signal.reason) throw error;
      throw signInFailure(backendId, error, config, log, await identity.catch(() => undefined));
    }
  };
}

function entraTokens(library: typeof AzureIdentity, entra: EntraConfig): () => Promise<string> {
  const authorityHost = entra.authorityHost?.replace(/\/+$/, '');
  const knownAuthorities = new Set<string>(Object.values(library.AzureAuthorityHosts));
  const credential = new library.ClientSecretCredential(entra.tenantId, entra.clientId, entra.clientSecret, {
    ...(authorityHost ? { authorityHost } : {}),
    // Instance discovery asks Microsoft's public cloud about the authority, which a private authority (Azure
    // Stack, a test's stand-in) is unknown to: only the known Azure clouds keep it.
    disableInstanceDiscovery: authorityHost !== undefined && !knownAuthorities.has(authorityHost),
  });
  return library.getBearerTokenProvider(credential, AZURE_OPENAI_SCOPE);
}

/**
 * Entra refusing the app (wrong secret, unknown client or tenant: its OAuth error, such as invalid_client) is the
 * gateway's configuration, as a refused key is: upstream_auth_failed, the deployment's fault. Anything else (Entra
 * unreachable) is upstream_unreachable. Either way the client's message names no credential; the log has Entra's
 * reason, scrubbed.
 */
function signInFailure(
  backendId: string,
  error: unknown,
  config: AzureBackendConfig,
  log: BackendLog,
  library: typeof AzureIdentity | undefined,
): GatewayException {
  const said = scrubAzure(error instanceof Error ? error.message : String(error), config);
  const refusal = entraRefusal(error, library);
  if (refusal) {
    log(`Entra ID refused the backend's app registration: ${said}`, 'error');
    return new GatewayException(
      'upstream_auth_failed',
      `Backend "${backendId}" could not sign in to Entra ID (${scrubAzure(refusal, config)}).`,
      { deploymentFault: true, upstream: { status: 401, message: said } },
    );
  }
  log(`could not get an Entra ID token: ${said}`, 'warn');
  return new GatewayException(
    'upstream_unreachable',
    `Backend "${backendId}" could not get an Entra ID token.`,
  );
}

/**
 * Entra's OAuth error code when Entra answered and refused (invalid_client, unauthorized_client, invalid_tenant...):
 * @azure/identity reports that as an AuthenticationRequiredError whose cause is MSAL's ServerError (or, on some
 * paths, as its own AuthenticationError); an authority it cannot reach is a CredentialUnavailableError.
 */
function entraRefusal(error: unknown, library: typeof AzureIdentity | undefined): string | undefined {
  if (library && error instanceof library.AuthenticationError) return error.errorResponse.error;
  const cause = (error as { cause?: { name?: unknown; errorCode?: unknown } } | undefined)?.cause;
  return cause?.name === 'ServerError' && typeof cause.errorCode === 'string' ? cause.errorCode : undefined;
}
