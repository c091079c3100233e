import { Module } from '@nestjs/common';
import { GatewayModule } from '../../gateway/gateway.module';
import { ResponseStore } from './response-store';
import { ResponsesController } from './responses.controller';
import { ResponsesService } from './responses.service';

@Module({
  imports: [GatewayModule],
  controllers: [ResponsesController],
  providers: [ResponsesService, ResponseStore],
})
export class ResponsesModule {}
