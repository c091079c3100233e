import { Module } from '@nestjs/common';
import { RedisResponseCacheEntries } from './redis-response-cache.repository';
import { RESPONSE_CACHE_ENTRIES } from './response-cache.repository';
import { ResponseCache } from './response-cache.service';

@Module({
  providers: [ResponseCache, { provide: RESPONSE_CACHE_ENTRIES, useClass: RedisResponseCacheEntries }],
  exports: [ResponseCache],
})
export class ResponseCacheModule {}
