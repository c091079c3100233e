import { Module, RequestMethod, type MiddlewareConsumer, type NestModule } from '@nestjs/common';
import { ChatModule } from '../chat/chat.module';
import { LimitsModule } from '../limits/limits.module';
import { UsageModule } from '../usage/usage.module';
import { UsageRecorder } from '../usage/usage-recorder';
import { RedisStoredResponses, ResponseStore, STORED_RESPONSES } from './response-store';
import { ResponsesController } from './responses.controller';
import { ResponsesService } from './responses.service';

@Module({
  imports: [ChatModule, UsageModule, LimitsModule],
  controllers: [ResponsesController],
  providers: [ResponsesService, ResponseStore, { provide: STORED_RESPONSES, useClass: RedisStoredResponses }],
})
export class ResponsesModule implements NestModule {
  configure(consumer: MiddlewareConsumer): void {
    consumer.apply(UsageRecorder).forRoutes({ path: 'v1/responses', method: RequestMethod.POST });
  }
}
