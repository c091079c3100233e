import { Module } from '@nestjs/common';
import { UsageModule } from '../usage/usage.module';
import { StreamRelay } from './stream-relay.service';

@Module({ imports: [UsageModule], providers: [StreamRelay], exports: [StreamRelay] })
export class StreamingModule {}
