/** One HTTP request to an upstream, as an adapter builds it. */
export interface UpstreamCall {
  path: string;
  headers: Record<string, string>;
  /** JSON text, or its UTF-8 bytes when assembled from the client's own (shared/json-splice.ts). */
  body: string | Buffer;
  /** A model's own timeouts, over the backend's (set by the chat service, not the adapters). */
  timeouts?: { firstByteMs?: number; idleMs?: number };
}
