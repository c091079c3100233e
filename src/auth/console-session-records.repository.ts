/** The Nest injection token of the console sessions' repository (Redis in production). */
export const CONSOLE_SESSION_RECORDS = Symbol('ConsoleSessionRecords');

/**
 * Console sessions by the SHA-256 of their id (console-sessions.ts: the id itself is never stored), each as JSON
 * that expires with the session.
 */
export interface ConsoleSessionRecords {
  save(digest: string, session: string, ttlSeconds: number): Promise<void>;
  /** The session's JSON, or null (unknown or expired). */
  find(digest: string): Promise<string | null>;
  remove(digest: string): Promise<void>;
}
