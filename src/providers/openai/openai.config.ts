import { IsBoolean } from 'class-validator';
import { BackendConfig } from '../../config/config.schema';

/** An `openai` backend's settings: the common ones and its own. */
export class OpenAIBackendConfig extends BackendConfig {
  /**
   * The backend serves OpenAI's Responses API (`POST <baseUrl>/responses`: OpenAI itself, Azure OpenAI v1).
   * POST /v1/responses then goes to it natively (hosted tools, encrypted reasoning) instead of as chat.
   */
  @IsBoolean() responsesApi = false;
}
