import { Module } from '@nestjs/common';
import { ProvidersModule } from '../providers/providers.module';
import { BackendHealth } from './backend-health';
import { CircuitBreakers } from './circuit-breakers';
import { DeploymentsController } from './deployments.controller';
import { ModelRouter } from './model-router.service';
import { ModelsController } from './models.controller';
import { UpstreamCaller } from '../gateway/upstream-caller';

@Module({
  imports: [ProvidersModule],
  providers: [ModelRouter, CircuitBreakers, BackendHealth, UpstreamCaller],
  controllers: [ModelsController, DeploymentsController],
  exports: [ModelRouter, CircuitBreakers, BackendHealth, UpstreamCaller],
})
export class RoutingModule {}
