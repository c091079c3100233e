import { Inject, Injectable } from '@nestjs/common';
import { GatewayConfig, type ModelConfig } from '../config/config.schema';
import { GatewayException } from '../core/errors/gateway.exception';
import type { Principal } from '../auth/principal';
import { BACKENDS, type Backend } from '../providers/provider-adapter';
import { compileModelGlobs } from './model-glob';
import { BackendHealth } from './backend-health';
import type { Deployment } from './deployment';

export type { Deployment };

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

interface ModelEntry extends RoutedModel {
  /** Every configured deployment, with those whose backend can never answer (no key): the admin view shows them. */
  configured: Deployment[];
  /** Why none of its deployments can ever answer as configured (the first one's reason, e.g. a missing key). */
  unavailable?: string;
}

/** Model name -> deployments (+ fallbacks), and whether the caller's team may use it. */
@Injectable()
export class ModelRouter {
  private readonly models = new Map<string, ModelEntry>();
  /** Compiled glob matchers, keyed by the team's glob list (teams share few distinct lists). */
  private readonly matchers = new Map<string, (model: string) => boolean>();

  constructor(
    config: GatewayConfig,
    @Inject(BACKENDS) backends: Map<string, Backend>,
    private readonly health: BackendHealth,
  ) {
    for (const [model, modelConfig] of Object.entries(config.models)) {
      // The config loader already checked every deployment names a known backend.
      const declared = modelConfig.deployments ?? [
        { backend: modelConfig.backend, upstreamModel: modelConfig.upstreamModel, weight: 1, priority: 0 },
      ];
      const all = declared.map((d) => ({
        id: `${d.backend}/${d.upstreamModel}`,
        backend: backends.get(d.backend)!,
        upstreamModel: d.upstreamModel,
        weight: d.weight,
        priority: d.priority,
      }));
      const usable = all.filter((d) => !d.backend.unavailable);
      // A model none of whose deployments can answer says why (the first one's reason, e.g. a missing key).
      this.models.set(model, {
        model,
        config: modelConfig,
        deployments: usable,
        configured: all,
        unavailable: usable.length ? undefined : all[0]?.backend.unavailable,
      });
    }
  }

  resolve(model: string, principal: Principal): Route {
    const entry = this.models.get(model);
    if (!entry) {
      throw new GatewayException(
        'model_not_found',
        `The model \`${model}\` does not exist or you do not have access to it.`,
        {
          param: 'model',
        },
      );
    }
    if (!this.matcher(principal.models)(model)) {
      throw new GatewayException(
        'model_not_allowed',
        `Team "${principal.teamId}" may not use the model \`${model}\`.`,
        {
          param: 'model',
        },
      );
    }
    if (principal.tokenModels && !this.matcher(principal.tokenModels)(model)) {
      throw new GatewayException('model_not_allowed', `This token may not use the model \`${model}\`.`, {
        param: 'model',
      });
    }
    const unservable = this.unservableBecause(entry);
    if (unservable) throw unavailable(model, unservable);
    // Fallbacks the caller may not use, or that cannot answer, are left out.
    const fallbacks = (entry.config.fallbacks ?? [])
      .map((name) => this.models.get(name)!)
      .filter((fallback) => !this.unservableBecause(fallback) && this.allows(principal, fallback.model))
      .map(({ model: name, config, deployments }) => ({ model: name, config, deployments }));
    return {
      model,
      config: entry.config,
      deployments: entry.deployments,
      backend: entry.deployments[0].backend,
      fallbacks,
    };
  }

  /**
   * The 403 `model_unavailable` a configured model this principal may use answers when it cannot be served as
   * configured (see unservableBecause), or undefined: what GET /v1/models/{model} says of a model it does not list
   * for that reason, rather than a 404 that says the model does not exist.
   */
  unavailableFor(model: string, principal: Principal): GatewayException | undefined {
    const entry = this.models.get(model);
    if (!entry || !this.allows(principal, model)) return undefined;
    const unservable = this.unservableBecause(entry);
    return unservable ? unavailable(model, unservable) : undefined;
  }

  /**
   * Why none of the model's deployments can answer until the config is fixed (a missing key, a local model that
   * cannot load: BackendHealth.misconfigured), if so. A local model's file is found missing only once its worker
   * has tried to load it, so this is asked per request, not once at start-up.
   */
  private unservableBecause(entry: ModelEntry): string | undefined {
    if (entry.unavailable) return entry.unavailable;
    const reasons = entry.deployments.map((deployment) => this.health.misconfigured(deployment.backend));
    return reasons.every((reason) => reason !== undefined) ? reasons[0] : undefined;
  }

  /**
   * The configured models this principal's team may use and that can answer, in config order: a model is listed
   * while at least one of its deployments is not known to be down (see `hiddenBecause`).
   */
  modelsFor(principal: Principal): Route[] {
    return [...this.models.values()]
      .filter((entry) => this.allows(principal, entry.model) && this.hiddenBecause(entry.model) === undefined)
      .map(({ model, config, deployments }) => ({
        model,
        config,
        deployments,
        backend: deployments[0].backend,
        fallbacks: [],
      }));
  }

  /**
   * Why a model is not listed in /v1/models, or undefined when it is: none of its deployments can answer as
   * configured (a missing key), or every one is known to be down (unreachable, a local model that cannot load,
   * an open circuit: backend-health.ts).
   */
  hiddenBecause(model: string): string | undefined {
    const entry = this.models.get(model);
    if (!entry) return undefined;
    if (entry.unavailable) return entry.unavailable;
    const down = entry.deployments.map((deployment) => this.health.downBecause(deployment));
    if (down.some((reason) => reason === undefined)) return undefined;
    return `every deployment is known to be down: ${entry.deployments.map((deployment, i) => `${deployment.id}: ${down[i]}`).join('; ')}`;
  }

  /** Every configured deployment of every model, those that can never answer included (the admin view of their health). */
  allDeployments(): Array<{ model: string; deployment: Deployment }> {
    return [...this.models.values()].flatMap((entry) =>
      entry.configured.map((deployment) => ({ model: entry.model, deployment })),
    );
  }

  private allows(principal: Principal, model: string): boolean {
    return (
      this.matcher(principal.models)(model) &&
      (!principal.tokenModels || this.matcher(principal.tokenModels)(model))
    );
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

function unavailable(model: string, reason: string): GatewayException {
  return new GatewayException('model_unavailable', `The model \`${model}\` is not available: ${reason}.`, {
    param: 'model',
  });
}
