import type { IncomingHttpHeaders } from 'node:http';

/**
 * What the client's `Cache-Control` asks of the response cache: `no-cache` skips the lookup (the fresh answer
 * is stored, replacing the old one); `no-store` skips the lookup and the storing; anything else uses the cache.
 */
export type ClientCacheChoice = 'use' | 'no-cache' | 'no-store';

export function clientCacheChoice(headers: IncomingHttpHeaders): ClientCacheChoice {
  const header = headers['cache-control'];
  if (header === undefined) return 'use';
  const directives = header
    .toLowerCase()
    .split(',')
    .map((directive) => directive.trim().split('=')[0]);
  if (directives.includes('no-store')) return 'no-store';
  if (directives.includes('no-cache')) return 'no-cache';
  return 'use';
}
