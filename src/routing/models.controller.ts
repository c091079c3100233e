import { Controller, Get, Param, Req } from '@nestjs/common';
import type { Request } from 'express';
import { GatewayException } from '../core/errors/gateway.exception';
import { ModelRouter, type Route } from './model-router.service';

const LISTED_AT = Math.floor(Date.now() / 1000);

/**
 * GET /v1/models and GET /v1/models/{model} in OpenAI's shapes (`list` of `model` objects), limited to what the
 * caller's token may use and what can answer. A model the caller may not see is a 404, exactly like one that
 * does not exist, so a token learns nothing about other teams' models.
 */
@Controller('v1/models')
export class ModelsController {
  constructor(private readonly router: ModelRouter) {}

  @Get()
  list(@Req() req: Request) {
    return { object: 'list', data: this.router.modelsFor(req.exchange.caller).map(modelObject) };
  }

  /** `client.models.retrieve(id)`: ids with a slash arrive URL-encoded (the SDKs encode path parameters). */
  @Get(':model')
  retrieve(@Param('model') model: string, @Req() req: Request) {
    const route = this.router.modelsFor(req.exchange.caller).find((candidate) => candidate.model === model);
    if (!route)
      throw (
        // Configured and allowed but not servable as configured: the same 403 using it gives, not "does not exist".
        this.router.unavailableFor(model, req.exchange.caller) ??
        new GatewayException(
          'model_not_found',
          `The model \`${model}\` does not exist or you do not have access to it.`,
          { param: 'model' },
        )
      );
    return modelObject(route);
  }
}

function modelObject(route: Route) {
  return {
    id: route.model,
    object: 'model',
    created: LISTED_AT,
    owned_by: route.backend.id,
    family: route.backend.adapter.family,
    // A local model reasons only if its GGUF's chat template has a thought section, whatever the config says.
    reasoning: route.config.thinking !== 'none' && route.backend.client.canThink?.() !== false,
  };
}
