import type { ClassConstructor } from 'class-transformer';
import type { BackendConfig, ModelConfig, ThinkingMode } from './config.schema';

/**
 * What the config loader needs to know of a backend family: its `type`, the class its backends' settings are
 * validated with (the common BackendConfig plus the family's own keys), and what its models may be. The providers'
 * registry (providers/families.ts) is such a list; the loader is given it (buildConfig, loadConfig) and never imports
 * it, so config/ names no family.
 */
export interface BackendFamilyShape {
  readonly type: string;
  /** The class a backend of this type is validated with: BackendConfig or a subclass with the family's keys. */
  readonly config: ClassConstructor<BackendConfig>;
  /** `models.<name>.thinking` values that make sense for models on this family's backends. */
  readonly thinking: readonly ThinkingMode[];
  /** Whether its models may be `kind: embedding`. */
  readonly embeddings: boolean;
  /** Why `deployment` of `model` cannot be served by this backend as configured (a family's own rule), or undefined. */
  modelProblem?(
    model: ModelConfig,
    backend: BackendConfig,
    deployment: ModelDeployment,
  ): ModelProblem | undefined;
}

/** One of a model's deployments: the backend's id and the model's id there (the shorthand's pair, or a list entry). */
export interface ModelDeployment {
  backend: string;
  upstreamModel: string;
}

/**
 * A family's objection to a deployment and the key it is about, which the loader prints with the model's path:
 * `kind` (the model's), or `upstreamModel` (the deployment's: `models.<name>.upstreamModel`, or
 * `models.<name>.deployments[i].upstreamModel`).
 */
export interface ModelProblem {
  key: 'kind' | 'upstreamModel';
  message: string;
}

export type BackendFamilies = readonly BackendFamilyShape[];
