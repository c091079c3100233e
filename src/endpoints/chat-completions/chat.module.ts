import { Module } from '@nestjs/common';
import { GatewayModule } from '../../gateway/gateway.module';
import { ChatController } from './chat.controller';

@Module({ imports: [GatewayModule], controllers: [ChatController] })
export class ChatModule {}
