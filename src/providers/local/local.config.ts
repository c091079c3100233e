import { Type } from 'class-transformer';
import { IsBoolean, IsIn, IsInt, IsString, Max, Min, ValidateNested } from 'class-validator';
import type { ModelDeployment, ModelProblem } from '../../config/backend-families';
import { BackendConfig, type ModelConfig } from '../../config/config.schema';
import { AUTO_TOOL_CHOICES, type AutoToolChoice } from './local-protocol';

/** `backends.<id>.local`: the model runtime, its model and its capacity. */
export class LocalBackendConfig {
  /** A GGUF file (default: the model `npm run model:fetch` puts in .cache/models). */
  @IsString() modelPath = '.cache/models/SmolLM2-135M-Instruct.Q4_1.gguf';
  /** Where `npm run local:install` put node-llama-cpp (kept out of the gateway's own install). */
  @IsString() runtimeDir = 'runtimes/local';
  /** Requests generated at once (one context sequence each). */
  @IsInt() @Min(1) @Max(64) parallel = 2;
  /** Requests waiting for a free sequence; beyond this, 429 with Retry-After. */
  @IsInt() @Min(0) queueSize = 16;
  /** Context tokens per sequence (prompt + completion). */
  @IsInt() @Min(256) contextSize = 2048;
  /** CPU threads for inference (0: one per core but one, left to the gateway). More threads than cores makes llama.cpp crawl. */
  @IsInt() @Min(0) threads = 0;
  /**
   * Pin the worker to the CPUs its threads use (the last `threads` this process may use), leaving the others to
   * the gateway, when that leaves it at least one. Linux with `taskset`; elsewhere nothing is pinned.
   */
  @IsBoolean() pinCpus = true;
  /**
   * Completion tokens a request gets when it sets no max_tokens (never more than the context has left): a small
   * model without a limit can repeat itself until the context is full, and with context shifting, forever.
   */
  @IsInt() @Min(1) defaultMaxTokens = 512;
  /**
   * What `tool_choice: "auto"` means for this model: `model`, the model decides whether to call a tool; `callFirst`,
   * for a model too small to decide (the default SmolLM2-135M never calls one on its own): a request whose latest
   * turn is the user's and that holds no tool result yet is answered with a call (the model picks the tool and
   * writes its arguments), and every later one with text: one forced call per conversation. See providers/local/local-tools.ts and "Local models" in docs/backends.md.
   */
  @IsIn(AUTO_TOOL_CHOICES) autoToolChoice: AutoToolChoice = 'model';
  /**
   * The GGUF is an embedding model (e.g. all-MiniLM-L6-v2, `npm run model:fetch -- --model minilm-l6-embed`): the
   * worker makes an embedding context instead of chat sequences, and the backend serves POST /v1/embeddings only.
   */
  @IsBoolean() embedding = false;
}

/** A `local` backend's settings: the common ones (no `baseUrl`: it is not reached over HTTP) and `local`. */
export class LocalFamilyConfig extends BackendConfig {
  @ValidateNested() @Type(() => LocalBackendConfig) local: LocalBackendConfig = new LocalBackendConfig();

  override reachedOverHttp(): boolean {
    return false;
  }
}

/** A local backend runs one GGUF, a chat model or an embedding model: the model's `kind` must be the same. */
export function localModelProblem(
  model: ModelConfig,
  backend: LocalFamilyConfig,
  { backend: id }: ModelDeployment,
): ModelProblem | undefined {
  if ((model.kind === 'embedding') === backend.local.embedding) return undefined;
  const message =
    model.kind === 'embedding'
      ? `backend "${id}" runs a chat model; an embedding model needs a local backend with local.embedding: true`
      : `backend "${id}" runs an embedding model (local.embedding: true); set kind: embedding`;
  return { key: 'kind', message };
}
