import { Module } from '@nestjs/common';
import { ProvidersModule } from '../providers/providers.module';
import { ModelRouter } from './model-router.service';
import { ModelsController } from './models.controller';

@Module({ imports: [ProvidersModule], providers: [ModelRouter], controllers: [ModelsController], exports: [ModelRouter] })
export class RoutingModule {}
