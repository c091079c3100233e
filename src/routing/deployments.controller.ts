import { Controller, Get } from '@nestjs/common';
import { AdminOnly } from '../auth/route-access.decorators';
import { CircuitBreakers } from './circuit-breakers';
import { ModelRouter } from './model-router.service';

/**
 * GET /admin/v1/deployments: every model's deployments and their health on the replica that answers (circuits
 * are per replica: see circuit-breakers.ts).
 */
@AdminOnly()
@Controller('admin/v1/deployments')
export class DeploymentsController {
  constructor(
    private readonly router: ModelRouter,
    private readonly circuits: CircuitBreakers,
  ) {}

  @Get()
  list() {
    return {
      object: 'list',
      data: this.router.allDeployments().map(({ model, deployment }) => ({
        model,
        deployment: deployment.id,
        backend: deployment.backend.id,
        upstream_model: deployment.upstreamModel,
        weight: deployment.weight,
        priority: deployment.priority,
        in_flight: deployment.backend.client.inFlight?.() ?? null,
        circuit: this.circuits.describe(deployment.id),
      })),
    };
  }
}
