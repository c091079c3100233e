/** The Nest injection token of the MCP sessions' repository (Redis in production). */
export const MCP_SESSION_RECORDS = Symbol('McpSessionRecords');

/**
 * MCP sessions (mcp-sessions.ts), kept per token by the SHA-256 of their id, each a JSON record that expires with
 * the session (`ttlSeconds` after it was last saved or refreshed; `nowMs` is the caller's clock). A token holds at
 * most `maxPerToken` live sessions: saving one more ends the one refreshed longest ago. Every replica reads the same
 * records, so a session opened on one is known to all.
 */
export interface McpSessionRecords {
  /** False while the store is known to be down: sessions are then neither issued nor checked. */
  available(): boolean;
  save(
    tokenId: string,
    digest: string,
    record: string,
    at: { nowMs: number; ttlSeconds: number; maxPerToken: number },
  ): Promise<void>;
  /** Writes the record again with a fresh TTL, only if it is still live (an ended session stays ended). */
  refresh(
    tokenId: string,
    digest: string,
    record: string,
    at: { nowMs: number; ttlSeconds: number },
  ): Promise<void>;
  /** The record, or null (never issued, ended, evicted by the cap, or expired). */
  find(tokenId: string, digest: string, at: { nowMs: number; ttlSeconds: number }): Promise<string | null>;
  remove(tokenId: string, digest: string): Promise<void>;
}
