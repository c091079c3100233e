import { Module } from '@nestjs/common';
import { GatewayModule } from '../../gateway/gateway.module';
import { MessagesController } from './messages.controller';

@Module({ imports: [GatewayModule], controllers: [MessagesController] })
export class MessagesModule {}
