import type { BackendFamilyShape, ModelDeployment, ModelProblem } from '../config/backend-families';
import type { BackendConfig, ModelConfig } from '../config/config.schema';
import type { ProviderAdapter } from './provider-adapter';
import type { BackendClient } from './upstream-client';

/** How a backend's client tells the operator what happens to it (a fault at warn or error, so it is seen). */
export type BackendLog = (message: string, level?: 'info' | 'warn' | 'error') => void;

/**
 * What a backend family is, said once in its own folder (`providers/<family>/<family>.family.ts`): its `type` in
 * the config and the class its backends' settings are validated with, the thinking modes its models may use,
 * whether it needs an API key, and how to make its adapter and client. providers/families.ts lists them; the config
 * loader is given that list (config/ names no family), and the providers module derives from it, so adding a family
 * is a folder and a line there.
 */
export interface ProviderFamily<C extends BackendConfig = BackendConfig> extends BackendFamilyShape {
  /** Whether a backend of this family cannot answer without `apiKey` (unless `apiKeyRequired` says otherwise). */
  keyRequired(config: C): boolean;
  /**
   * The provider id the price data (@pydantic/genai-prices) prices this family's upstream models under (`openai`,
   * `anthropic`, `google`, `azure`, `aws`), when the backend's base URL is not one the data knows; none: only
   * configured prices apply (billing/price-book.ts).
   */
  readonly priceProvider?: string;
  modelProblem?(model: ModelConfig, backend: C, deployment: ModelDeployment): ModelProblem | undefined;
  createAdapter(backendId: string, config: C): ProviderAdapter;
  createClient(backendId: string, config: C, log: BackendLog): BackendClient;
}
