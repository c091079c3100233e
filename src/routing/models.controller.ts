import { Controller, Get, Req } from '@nestjs/common';
import type { Request } from 'express';
import { ModelRouter } from './model-router.service';

const LISTED_AT = Math.floor(Date.now() / 1000);

/** GET /v1/models in OpenAI's list shape, limited to what the caller's team may use. */
@Controller('v1/models')
export class ModelsController {
  constructor(private readonly router: ModelRouter) {}

  @Get()
  list(@Req() req: Request) {
    return {
      object: 'list',
      data: this.router.modelsFor(req.ledger.principal!).map((route) => ({
        id: route.model,
        object: 'model',
        created: LISTED_AT,
        owned_by: route.backend.id,
        family: route.backend.adapter.family,
        // A local model reasons only if its GGUF's chat template has a thought section, whatever the config says.
        reasoning: route.config.thinking !== 'none' && route.backend.client.canThink?.() !== false,
      })),
    };
  }
}
