/** The Nest injection token of the response cache's entries (Redis in production). */
export const RESPONSE_CACHE_ENTRIES = Symbol('ResponseCacheEntries');

/** Cached answers, per team and key, each expiring on its own. */
export interface ResponseCacheEntries {
  /** False while the store is known to be down: the cache is skipped then, rather than waiting for a timeout. */
  available(): boolean;
  /** The entry, or null (never stored, expired, or another team's: the team is part of where it is kept). */
  find(team: string, key: string): Promise<string | null>;
  save(team: string, key: string, entry: string, ttlSeconds: number): Promise<void>;
}
