import { Global, Module, type DynamicModule } from '@nestjs/common';
import { GatewayConfig } from './config.schema';

/**
 * Makes the validated GatewayConfig injectable everywhere. The config is loaded
 * once, before Nest starts, so a bad file never gets as far as opening a port.
 */
@Global()
@Module({})
export class ConfigModule {
  static forRoot(config: GatewayConfig): DynamicModule {
    return {
      module: ConfigModule,
      providers: [{ provide: GatewayConfig, useValue: config }],
      exports: [GatewayConfig],
    };
  }
}
