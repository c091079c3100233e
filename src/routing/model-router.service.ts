import { Inject, Injectable } from '@nestjs/common';
import { GatewayConfig, type ModelConfig } from '../config/config.schema';
import { GatewayException } from '../common/errors/gateway.exception';
import type { Principal } from '../auth/principal';
import { BACKENDS, type Backend } from '../providers/provider-adapter';
import { compileModelGlobs } from './model-glob';

/** One deployment of a model: where it runs, under which name, and its share of the traffic. */
export interface Deployment {
  /** `<backend>/<upstreamModel>`: names the deployment in headers, records, metrics and circuits. */
  id: string;
  backend: Backend;
  upstreamModel: string;
  weight: number;
  priority: number;
}

/** A configured model and the deployments of it that can answer. */
export interface RoutedModel {
  model: string;
  config: ModelConfig;
  deployments: Deployment[];
}

/** Where one client-facing model name goes: its deployments, then the fallbacks this caller may use. */
export interface Route extends RoutedModel {
  /** The first deployment's backend (what /v1/models shows as the model's owner and family). */
  backend: Backend;
  fallbacks: RoutedModel[];
}

/** Model name -> deployments (+ fallbacks), and whether the caller's team may use it. */
@Injectable()
export class ModelRouter {
  private readonly models = new Map<string, { model: string; config: ModelConfig; deployments: Deployment[]; unavailable?: string }>();
  /** Compiled glob matchers, keyed by the team's glob list (teams share few distinct lists). */
  private readonly matchers = new Map<string, (model: string) => boolean>();

  constructor(
    config: GatewayConfig,
    @Inject(BACKENDS) backends: Map<string, Backend>,
  ) {
    for (const [model, modelConfig] of Object.entries(config.models)) {
      // The config loader already checked every deployment names a known backend.
      const declared = modelConfig.deployments ?? [{ backend: modelConfig.backend, upstreamModel: modelConfig.upstreamModel, weight: 1, priority: 0 }];
      const all = declared.map((d) => ({ id: `${d.backend}/${d.upstreamModel}`, backend: backends.get(d.backend)!, upstreamModel: d.upstreamModel, weight: d.weight, priority: d.priority }));
      const usable = all.filter((d) => !d.backend.unavailable);
      // A model none of whose deployments can answer says why (the first one's reason, e.g. a missing key).
      this.models.set(model, { model, config: modelConfig, deployments: usable, unavailable: usable.length ? undefined : all[0]?.backend.unavailable });
    }
  }

  resolve(model: string, principal: Principal): Route {
    const entry = this.models.get(model);
    if (!entry) {
      throw new GatewayException('model_not_found', `The model \`${model}\` does not exist or you do not have access to it.`, {
        param: 'model',
      });
    }
    if (!this.matcher(principal.models)(model)) {
      throw new GatewayException('model_not_allowed', `Team "${principal.teamId}" may not use the model \`${model}\`.`, {
        param: 'model',
      });
    }
    if (principal.tokenModels && !this.matcher(principal.tokenModels)(model)) {
      throw new GatewayException('model_not_allowed', `This token may not use the model \`${model}\`.`, { param: 'model' });
    }
    if (entry.unavailable) {
      throw new GatewayException('model_unavailable', `The model \`${model}\` is not available: ${entry.unavailable}.`, { param: 'model' });
    }
    // Fallbacks the caller may not use, or that cannot answer, are left out.
    const fallbacks = (entry.config.fallbacks ?? [])
      .map((name) => this.models.get(name)!)
      .filter((fallback) => !fallback.unavailable && this.allows(principal, fallback.model))
      .map(({ model: name, config, deployments }) => ({ model: name, config, deployments }));
    return { model, config: entry.config, deployments: entry.deployments, backend: entry.deployments[0].backend, fallbacks };
  }

  /** The configured models this principal's team may use and that can answer, in config order. */
  modelsFor(principal: Principal): Route[] {
    return [...this.models.values()]
      .filter((entry) => !entry.unavailable && this.allows(principal, entry.model))
      .map((entry) => ({ ...entry, backend: entry.deployments[0].backend, fallbacks: [] }));
  }

  /** Every deployment of every model (the admin view of their health). */
  allDeployments(): Array<{ model: string; deployment: Deployment }> {
    return [...this.models.values()].flatMap((entry) => entry.deployments.map((deployment) => ({ model: entry.model, deployment })));
  }

  private allows(principal: Principal, model: string): boolean {
    return this.matcher(principal.models)(model) && (!principal.tokenModels || this.matcher(principal.tokenModels)(model));
  }

  private matcher(globs: readonly string[]): (model: string) => boolean {
    const key = globs.join('\n');
    let matcher = this.matchers.get(key);
    if (!matcher) {
      matcher = compileModelGlobs(globs);
      if (this.matchers.size > 10_000) this.matchers.clear();
      this.matchers.set(key, matcher);
    }
    return matcher;
  }
}
