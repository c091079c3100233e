import type { ResponseCacheEntries } from '../../src/response-cache/response-cache.repository';

/** The response cache's entries in memory, for unit tests: by team and key, TTLs noted (not enforced), can fail. */
export class InMemoryResponseCacheEntries implements ResponseCacheEntries {
  readonly entries = new Map<string, { entry: string; ttlSeconds: number }>();
  /** While set, every call rejects (Redis failing a command). */
  failing = false;
  /** While cleared, the store is known to be down (Redis disconnected). */
  up = true;

  available(): boolean {
    return this.up;
  }

  async find(team: string, key: string): Promise<string | null> {
    if (this.failing) throw new Error('redis down');
    return this.entries.get(`${team}/${key}`)?.entry ?? null;
  }

  async save(team: string, key: string, entry: string, ttlSeconds: number): Promise<void> {
    if (this.failing) throw new Error('redis down');
    this.entries.set(`${team}/${key}`, { entry, ttlSeconds });
  }
}
