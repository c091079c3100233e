import { Module } from '@nestjs/common';
import { RoutingModule } from '../routing/routing.module';
import { StreamingModule } from '../streaming/streaming.module';
import { UsageModule } from '../usage/usage.module';
import { ChatController } from './chat.controller';
import { ChatService } from './chat.service';

@Module({ imports: [RoutingModule, StreamingModule, UsageModule], controllers: [ChatController], providers: [ChatService] })
export class ChatModule {}
