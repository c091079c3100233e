import { GatewayException } from '../../core/errors/gateway.exception';
import { backendSecrets, scrub, scrubError } from '../upstream-errors';
import type { AzureBackendConfig } from './azure.config';

/** A JSON Web Token (what Entra ID issues as an access token): header.payload.signature, base64url. */
const JWT = /\beyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]*/g;

/** The configured strings of an azure backend that must never reach anyone: its key, its client secret, ... */
export function azureSecrets(config: AzureBackendConfig): string[] {
  const secrets = backendSecrets(config);
  if (config.entra?.clientSecret) secrets.push(config.entra.clientSecret);
  return secrets;
}

/**
 * A text without the backend's secrets, nor any access token: Entra's tokens are made at run time, so no list of
 * configured secrets can name them; they are recognised by their shape.
 */
export function scrubAzure(text: string, config: AzureBackendConfig): string {
  return scrub(text.replace(JWT, '[redacted]'), azureSecrets(config));
}

/** The same error with every string scrubbed (in-band stream errors, which the OpenAI family's mapper builds). */
export function scrubAzureError(error: unknown, config: AzureBackendConfig): unknown {
  if (!(error instanceof GatewayException)) return error;
  const tokens = [error.message, error.upstream?.message ?? ''].flatMap((text) => text.match(JWT) ?? []);
  return scrubError(error, [...azureSecrets(config), ...tokens]);
}
