import { Module } from '@nestjs/common';
import { GatewayModule } from '../../gateway/gateway.module';
import { RedisStoredResponses, ResponseStore, STORED_RESPONSES } from './response-store';
import { ResponsesController } from './responses.controller';
import { ResponsesService } from './responses.service';

@Module({
  imports: [GatewayModule],
  controllers: [ResponsesController],
  providers: [ResponsesService, ResponseStore, { provide: STORED_RESPONSES, useClass: RedisStoredResponses }],
})
export class ResponsesModule {}
