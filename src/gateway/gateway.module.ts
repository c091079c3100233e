import { Module } from '@nestjs/common';
import { LimitsModule } from '../limits/limits.module';
import { ResponseCacheModule } from '../response-cache/response-cache.module';
import { RoutingModule } from '../routing/routing.module';
import { StreamingModule } from '../streaming/streaming.module';
import { UsageModule } from '../usage/usage.module';
import { Pipeline } from './pipeline';

/** The pipeline every endpoint runs on (its admission and upstream caller come with routing and usage). */
@Module({
  imports: [RoutingModule, StreamingModule, UsageModule, LimitsModule, ResponseCacheModule],
  providers: [Pipeline],
  exports: [Pipeline],
})
export class GatewayModule {}
