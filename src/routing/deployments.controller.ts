import { Controller, Get } from '@nestjs/common';
import { Requires } from '../access/requires.decorator';
import { AdminOnly } from '../auth/route-access.decorators';
import { BackendHealth } from './backend-health';
import { CircuitBreakers } from './circuit-breakers';
import { ModelRouter } from './model-router.service';

/**
 * GET /admin/v1/deployments: every model's deployments and their health on the replica that answers (circuits
 * are per replica: see circuit-breakers.ts), with why a deployment is known to be down and why a model is not
 * listed in /v1/models (backend-health.ts).
 */
@AdminOnly()
@Controller('admin/v1/deployments')
export class DeploymentsController {
  constructor(
    private readonly router: ModelRouter,
    private readonly circuits: CircuitBreakers,
    private readonly health: BackendHealth,
  ) {}

  @Get()
  @Requires('deployments:read')
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
        /** Why this deployment is skipped (no key, unreachable, cannot load, circuit open), or null. */
        down: this.health.downBecause(deployment) ?? null,
        model_listed: this.router.hiddenBecause(model) === undefined,
        /** Why /v1/models does not list the model (every deployment is down), or null. */
        model_hidden_because: this.router.hiddenBecause(model) ?? null,
      })),
    };
  }
}
