import { Module } from '@nestjs/common';
import { AuditModule } from '../audit/audit.module';
import { ConsoleSessionController } from './console-session.controller';

/** The admin web console: its sign-in API here, its page served by installConsole (console-static.ts). */
@Module({ imports: [AuditModule], controllers: [ConsoleSessionController] })
export class ConsoleModule {}
