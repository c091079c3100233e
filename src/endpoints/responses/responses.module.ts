import { Module, RequestMethod, type MiddlewareConsumer, type NestModule } from '@nestjs/common';
import { ChatModule } from '../chat-completions/chat.module';
import { LimitsModule } from '../../limits/limits.module';
import { UsageModule } from '../../usage/usage.module';
import { UsageRecorder } from '../../usage/usage-recorder';
import { ResponseStore } from './response-store';
import { ResponsesController } from './responses.controller';
import { ResponsesService } from './responses.service';

@Module({
  imports: [ChatModule, UsageModule, LimitsModule],
  controllers: [ResponsesController],
  providers: [ResponsesService, ResponseStore],
})
export class ResponsesModule implements NestModule {
  configure(consumer: MiddlewareConsumer): void {
    consumer.apply(UsageRecorder).forRoutes({ path: 'v1/responses', method: RequestMethod.POST });
  }
}
