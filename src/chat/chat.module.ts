import { Module } from '@nestjs/common';
import { RoutingModule } from '../routing/routing.module';
import { StreamingModule } from '../streaming/streaming.module';
import { LimitsModule } from '../limits/limits.module';
import { UsageModule } from '../usage/usage.module';
import { ChatController } from './chat.controller';
import { ChatService } from './chat.service';

@Module({ imports: [RoutingModule, StreamingModule, UsageModule, LimitsModule], controllers: [ChatController], providers: [ChatService] })
export class ChatModule {}
