import { IsString } from 'class-validator';
import { BackendConfig } from '../../config/config.schema';

/** An `anthropic` backend's settings: the common ones and its own. */
export class AnthropicBackendConfig extends BackendConfig {
  /** The `anthropic-version` header. */
  @IsString() anthropicVersion = '2023-06-01';
}
