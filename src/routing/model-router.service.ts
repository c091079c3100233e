import { Inject, Injectable } from '@nestjs/common';
import { GatewayConfig, type ModelConfig } from '../config/config.schema';
import { GatewayException } from '../common/errors/gateway.exception';
import type { Principal } from '../auth/principal';
import { BACKENDS, type Backend } from '../providers/provider-adapter';
import { compileModelGlobs } from './model-glob';

/** Where one client-facing model name goes. */
export interface Route {
  model: string;
  config: ModelConfig;
  backend: Backend;
}

/** Model name -> backend + upstream model, and whether the caller's team may use it. */
@Injectable()
export class ModelRouter {
  private readonly routes = new Map<string, Route>();
  /** Compiled glob matchers, keyed by the team's glob list (teams share few distinct lists). */
  private readonly matchers = new Map<string, (model: string) => boolean>();

  constructor(
    config: GatewayConfig,
    @Inject(BACKENDS) backends: Map<string, Backend>,
  ) {
    for (const [model, modelConfig] of Object.entries(config.models)) {
      // The config loader already checked every model names a known backend.
      this.routes.set(model, { model, config: modelConfig, backend: backends.get(modelConfig.backend)! });
    }
  }

  resolve(model: string, principal: Principal): Route {
    const route = this.routes.get(model);
    if (!route) {
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
    if (route.backend.unavailable) {
      throw new GatewayException('model_unavailable', `The model \`${model}\` is not available: ${route.backend.unavailable}.`);
    }
    return route;
  }

  /** The configured models this principal's team may use and that can answer, in config order. */
  modelsFor(principal: Principal): Route[] {
    return [...this.routes.values()].filter((route) => !route.backend.unavailable && this.allows(principal, route.model));
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
