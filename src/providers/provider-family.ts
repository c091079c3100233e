import type { BackendConfig, ThinkingMode } from '../config/config.schema';
import type { ProviderAdapter } from './provider-adapter';
import type { BackendClient } from './upstream-client';

/** How a backend's client tells the operator what happens to it (a fault at warn or error, so it is seen). */
export type BackendLog = (message: string, level?: 'info' | 'warn' | 'error') => void;

/**
 * What a backend family is, said once in its own folder (`providers/<family>/<family>.family.ts`): its `type` in
 * the config, the thinking modes its models may use, whether it needs an API key, and how to make its adapter and
 * client. providers/families.ts lists them; the config schema, the config loader and the providers module derive
 * from that list, so adding a family is a folder and a line there.
 */
export interface ProviderFamily {
  readonly type: string;
  /** `models.<name>.thinking` values that make sense for models on this family's backends. */
  readonly thinking: readonly ThinkingMode[];
  /** Whether its models may be `kind: embedding` (the adapter implements the embeddings calls). */
  readonly embeddings: boolean;
  /** Whether a backend of this family cannot answer without `apiKey` (unless `apiKeyRequired` says otherwise). */
  keyRequired(config: BackendConfig): boolean;
  createAdapter(backendId: string, config: BackendConfig): ProviderAdapter;
  createClient(backendId: string, config: BackendConfig, log: BackendLog): BackendClient;
}
