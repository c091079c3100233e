import type { ServerResponse } from 'node:http';
import { Inject, Injectable } from '@nestjs/common';
import type { Principal } from '../auth/principal';
import { AppLogger } from '../common/logging/logger';
import type { ResponseCacheConfig } from '../config/config.schema';
import { MetricsService } from '../metrics/metrics.service';
import type { CacheableRequest } from './cache-key';
import { CachedRequest, type CacheServices } from './cached-request';
import { RESPONSE_CACHE_ENTRIES, type ResponseCacheEntries } from './response-cache.repository';

/**
 * The response cache (docs/response-cache.md): whole answers of models that have one (`models.<name>.responseCache`),
 * kept per team and request, replayed in the client's own wire without calling a backend.
 */
@Injectable()
export class ResponseCache {
  private readonly services: CacheServices;

  constructor(
    @Inject(RESPONSE_CACHE_ENTRIES) entries: ResponseCacheEntries,
    metrics: MetricsService,
    logger: AppLogger,
  ) {
    this.services = {
      entries,
      count: (model, result) => metrics.responseCache.inc({ model, result }),
      logger: logger.pino,
    };
  }

  /**
   * The cache's part in one request to `model` (a configured name): undefined when the model has no cache or the
   * caller's team opted out (then the response has no cache header).
   */
  open(
    model: string,
    settings: ResponseCacheConfig | undefined,
    caller: Principal,
    request: Omit<CacheableRequest, 'team'>,
    res: ServerResponse,
  ): CachedRequest | undefined {
    if (!settings || caller.responseCache === false) return undefined;
    return new CachedRequest(this.services, model, settings, { ...request, team: caller.teamId }, res);
  }
}
