import { Module, RequestMethod, type MiddlewareConsumer, type NestModule } from '@nestjs/common';
import { LimitsModule } from '../limits/limits.module';
import { UsageModule } from '../usage/usage.module';
import { UsageRecorder } from '../usage/usage-recorder';
import { ENDPOINTS } from './endpoints';

/** Every endpoint's module, and the usage recorder in front of each billed route (endpoints.ts lists them). */
@Module({ imports: [UsageModule, LimitsModule, ...ENDPOINTS.map((endpoint) => endpoint.module)] })
export class EndpointsModule implements NestModule {
  configure(consumer: MiddlewareConsumer): void {
    const billed = ENDPOINTS.filter(({ route }) => route.billedAs !== undefined);
    consumer
      .apply(UsageRecorder)
      .forRoutes(...billed.map(({ route }) => ({ path: route.path.slice(1), method: RequestMethod.POST })));
  }
}
