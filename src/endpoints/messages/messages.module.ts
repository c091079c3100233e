import { Module, RequestMethod, type MiddlewareConsumer, type NestModule } from '@nestjs/common';
import { ChatModule } from '../chat-completions/chat.module';
import { LimitsModule } from '../../limits/limits.module';
import { RoutingModule } from '../../routing/routing.module';
import { UsageModule } from '../../usage/usage.module';
import { UsageRecorder } from '../../usage/usage-recorder';
import { MessagesController } from './messages.controller';
import { MessagesService } from './messages.service';

@Module({
  imports: [ChatModule, RoutingModule, UsageModule, LimitsModule],
  controllers: [MessagesController],
  providers: [MessagesService],
})
export class MessagesModule implements NestModule {
  configure(consumer: MiddlewareConsumer): void {
    consumer.apply(UsageRecorder).forRoutes({ path: 'v1/messages', method: RequestMethod.POST });
  }
}
