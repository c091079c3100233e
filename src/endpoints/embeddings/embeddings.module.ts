import { Module, RequestMethod, type MiddlewareConsumer, type NestModule } from '@nestjs/common';
import { LimitsModule } from '../../limits/limits.module';
import { RoutingModule } from '../../routing/routing.module';
import { UsageModule } from '../../usage/usage.module';
import { UsageRecorder } from '../../usage/usage-recorder';
import { EmbeddingsController } from './embeddings.controller';
import { EmbeddingsService } from './embeddings.service';

@Module({
  imports: [RoutingModule, UsageModule, LimitsModule],
  controllers: [EmbeddingsController],
  providers: [EmbeddingsService],
})
export class EmbeddingsModule implements NestModule {
  configure(consumer: MiddlewareConsumer): void {
    consumer.apply(UsageRecorder).forRoutes({ path: 'v1/embeddings', method: RequestMethod.POST });
  }
}
