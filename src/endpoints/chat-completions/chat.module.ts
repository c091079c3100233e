import { Module, RequestMethod, type MiddlewareConsumer, type NestModule } from '@nestjs/common';
import { RoutingModule } from '../../routing/routing.module';
import { StreamingModule } from '../../streaming/streaming.module';
import { LimitsModule } from '../../limits/limits.module';
import { UsageModule } from '../../usage/usage.module';
import { UsageRecorder } from '../../usage/usage-recorder';
import { ChatController } from './chat.controller';
import { ChatService } from '../../gateway/chat.service';

@Module({
  imports: [RoutingModule, StreamingModule, UsageModule, LimitsModule],
  controllers: [ChatController],
  providers: [ChatService],
  exports: [ChatService],
})
export class ChatModule implements NestModule {
  configure(consumer: MiddlewareConsumer): void {
    consumer.apply(UsageRecorder).forRoutes({ path: 'v1/chat/completions', method: RequestMethod.POST });
  }
}
