import { Module } from '@nestjs/common';
import { GatewayModule } from '../../gateway/gateway.module';
import { EmbeddingsController } from './embeddings.controller';

@Module({ imports: [GatewayModule], controllers: [EmbeddingsController] })
export class EmbeddingsModule {}
