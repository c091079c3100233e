import { Module } from '@nestjs/common';
import { AuditLog } from './audit.log';

@Module({ providers: [AuditLog], exports: [AuditLog] })
export class AuditModule {}
