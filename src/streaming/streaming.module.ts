import { Module } from '@nestjs/common';
import { StreamRelay } from './stream-relay.service';

@Module({ providers: [StreamRelay], exports: [StreamRelay] })
export class StreamingModule {}
