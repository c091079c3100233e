import { Type } from 'class-transformer';
import {
  IsIn,
  IsNotEmpty,
  IsOptional,
  IsString,
  IsUrl,
  Matches,
  ValidateIf,
  ValidateNested,
} from 'class-validator';
import { BackendConfig } from '../../config/config.schema';

/** A Microsoft Entra ID app registration (service principal) the gateway signs in as, with a client secret. */
export class EntraConfig {
  @IsString() @IsNotEmpty() tenantId!: string;
  @IsString() @IsNotEmpty() clientId!: string;
  @IsString() @IsNotEmpty() clientSecret!: string;
  /**
   * Where tokens come from (default `https://login.microsoftonline.com`; sovereign clouds and tests set it). Must be
   * https: @azure/identity refuses anything else.
   */
  @IsOptional()
  @IsUrl({ protocols: ['https'], require_protocol: true, require_tld: false })
  authorityHost?: string;
}

/**
 * An `azure` backend (Azure OpenAI, or a Foundry resource's OpenAI endpoint): `baseUrl` is the resource endpoint as
 * the portal shows it (`https://<resource>.openai.azure.com`), `upstreamModel` the deployment's name.
 */
export class AzureBackendConfig extends BackendConfig {
  /**
   * `v1` (default): `<baseUrl>/openai/v1/...` with the deployment as `model`; or a dated version such as
   * `2024-10-21` / `2025-04-01-preview`: `<baseUrl>/openai/deployments/<deployment>/...?api-version=<v>`.
   */
  @IsString()
  @Matches(/^(v1|\d{4}-\d{2}-\d{2}(-preview)?)$/, {
    message: 'must be v1 or a dated version such as 2024-10-21 or 2025-04-01-preview',
  })
  apiVersion = 'v1';

  /** Sign in with Entra ID instead of `apiKey` (one or the other, not both). */
  @IsOptional()
  @ValidateNested()
  @Type(() => EntraConfig)
  entra?: EntraConfig;

  /**
   * Refuses `apiKey` together with `entra`: which one the gateway uses must not be a guess. (A check, not a key:
   * the loader reports it as `backends.<id>.apiKeyOrEntra`.)
   */
  @ValidateIf((backend: AzureBackendConfig) => backend.entra !== undefined && Boolean(backend.apiKey))
  @IsIn([], { message: 'give either apiKey or entra, not both' })
  protected get apiKeyOrEntra(): string {
    return 'both';
  }
}
