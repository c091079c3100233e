/** The Nest injection token of the MCP sessions' repository (Redis in production). */
export const MCP_SESSION_RECORDS = Symbol('McpSessionRecords');

/**
 * MCP sessions (mcp-sessions.ts) by the SHA-256 of their id, each a JSON record that expires with the session. Every
 * replica reads the same records, so a session opened on one is known to all.
 */
export interface McpSessionRecords {
  /** False while the store is known to be down: sessions are then neither issued nor checked. */
  available(): boolean;
  save(digest: string, record: string, ttlSeconds: number): Promise<void>;
  /** Writes the record again with a fresh TTL, only if it still exists (an ended session stays ended). */
  refresh(digest: string, record: string, ttlSeconds: number): Promise<void>;
  /** The record, or null (never issued, ended or expired). */
  find(digest: string): Promise<string | null>;
  remove(digest: string): Promise<void>;
}
