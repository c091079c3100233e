import { Expose, Transform } from 'class-transformer';
import { IsArray, IsIn, IsOptional, IsString, Matches, ValidateIf } from 'class-validator';
import { BackendConfig } from '../../config/config.schema';
import { VERTEX_ANTHROPIC_BETAS, vertexBaseUrl } from './vertex-paths';

/**
 * A `vertex` backend's settings: the common ones and its own. `baseUrl` may be left out: it is then the region's
 * endpoint (https://<region>-aiplatform.googleapis.com, or https://aiplatform.googleapis.com for `global`).
 */
export class VertexBackendConfig extends BackendConfig {
  /** The Google Cloud project the models are called in (its id, e.g. `my-project`). */
  @IsString()
  @Matches(/^[A-Za-z0-9][A-Za-z0-9.:_-]*$/, { message: 'project must be a Google Cloud project id' })
  project!: string;

  /** The location: a region (`us-east5`, `europe-west1`) or `global`. */
  @IsString()
  @Matches(/^[a-z][a-z0-9-]*$/, { message: 'region must be a Vertex AI location such as us-east5 or global' })
  region!: string;

  // Exposed so the default is filled in when the key is absent (class-transformer then still visits it).
  // With a region that is not a location there is no default: that region is the problem reported, not this.
  @ValidateIf((backend: VertexBackendConfig) => backend.baseUrl !== undefined)
  @Expose()
  @Transform(({ value, obj }) => value ?? vertexBaseUrl((obj as { region?: unknown }).region))
  override baseUrl = '';

  /**
   * A Google credentials file (a service-account key, or an external-account file for workload identity
   * federation). Default: GOOGLE_APPLICATION_CREDENTIALS, else Application Default Credentials (gcloud's, or the
   * metadata server on Google Cloud).
   */
  @IsOptional() @IsString() credentialsFile?: string;

  /**
   * Refused: Vertex takes Google's OAuth tokens, not a key, and a key that is quietly ignored would have the operator
   * believe it is used (a Vertex "API key" in express mode works for Gemini only, which the gateway does not offer).
   */
  @ValidateIf((backend: VertexBackendConfig) => backend.apiKey !== undefined)
  @IsIn([], {
    message:
      'vertex backends take no apiKey: they sign in with Google credentials (credentialsFile, ' +
      'GOOGLE_APPLICATION_CREDENTIALS or Application Default Credentials); remove it',
  })
  declare apiKey?: string;

  /**
   * The `anthropic-beta` values passed on to Claude models (Vertex refuses the whole request for a value it does
   * not know, so the others are dropped). Default: the list in vertex-paths.ts.
   */
  @IsArray() @IsString({ each: true }) anthropicBetas: string[] = [...VERTEX_ANTHROPIC_BETAS];
}
