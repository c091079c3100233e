import { IsArray, IsNotEmpty, IsOptional, IsString, IsUrl, Matches, ValidateIf } from 'class-validator';
import { BackendConfig } from '../../config/config.schema';

/**
 * A `bedrock` backend's settings (AWS Bedrock Runtime): the common ones and its own. `baseUrl` is optional here
 * (the region's endpoint by default; a VPC endpoint or a test's stand-in overrides it); `apiKey`, when set, is a
 * Bedrock API key sent as a Bearer token instead of signing with the AWS default credential chain.
 */
export class BedrockBackendConfig extends BackendConfig {
  /** The AWS region whose Bedrock Runtime is called (`us-east-1`); also the SigV4 signing region. */
  @IsString({ message: 'must be set to an AWS region such as us-east-1' })
  @Matches(/^[a-z]{2,4}(-[a-z]+)+-\d+$/, { message: 'must be an AWS region such as us-east-1' })
  region!: string;

  // Replaces the common rule (class-validator keeps a subclass's condition for the same property over its parent's).
  @ValidateIf((backend: BedrockBackendConfig) => backend.baseUrl !== undefined)
  @IsUrl({ require_tld: false, protocols: ['http', 'https'], require_protocol: true })
  declare baseUrl: string;

  /**
   * Upstream model ids served with Anthropic's Messages body (InvokeModel) besides those whose id names the
   * `anthropic.` publisher: an application inference profile's ARN does not say which model it runs.
   */
  @IsOptional() @IsArray() @IsString({ each: true }) @IsNotEmpty({ each: true }) anthropicModels?: string[];
}

/** Bedrock Runtime's endpoint for a backend: `baseUrl` when set, else the region's public endpoint. */
export function bedrockBaseUrl(config: BedrockBackendConfig): string {
  return config.baseUrl ?? `https://bedrock-runtime.${config.region}.amazonaws.com`;
}
