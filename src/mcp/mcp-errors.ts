/**
 * The JSON-RPC and MCP error codes the gateway answers with: JSON-RPC 2.0's own (-32700 to -32603) and those the MCP
 * SDK's transports answer with, as numbers, so that the HTTP layer's errors need no SDK loaded.
 */
export const JsonRpcCode = {
  /** Not JSON. */
  ParseError: -32700,
  /** JSON, but not a JSON-RPC request (JSON-RPC 2.0, 5.1), or refused before it is served. */
  InvalidRequest: -32600,
  InvalidParams: -32602,
  InternalError: -32603,
  /** The SDK's transport answers its HTTP refusals (406, 413, 415) with it. */
  ServerError: -32000,
  /**
   * A server that did not answer in its timeoutMs: what the 1.x SDK answered a request that timed out, kept for the
   * gateway's clients (the v2 SDK keeps its timeouts local, an SdkError).
   */
  RequestTimeout: -32001,
  /** The same code: what the SDK's transport answers (404) a session it does not know. */
  SessionNotFound: -32001,
} as const;

/**
 * An MCP error the gateway answers a client with: the SDK's server sends any thrown error's `code`, `message` and
 * `data`, so this needs no SDK loaded (mcp-sdk.ts) where it is thrown. Its message is read once: the 1.x SDK's
 * McpError put `MCP error <code>: ` before it, and its client put the prefix before it again.
 */
export class McpAnswerError extends Error {
  constructor(
    readonly code: number,
    message: string,
    readonly data?: unknown,
  ) {
    super(message);
    this.name = 'McpAnswerError';
  }
}

/**
 * A server's error message without the `MCP error <code>: ` a 1.x SDK server puts before its own (its McpError's
 * constructor does, and the message goes on the wire as it is).
 */
export function withoutPrefix(error: { code: number; message: string }): string {
  const prefix = `MCP error ${error.code}: `;
  let message = error.message;
  while (message.startsWith(prefix)) message = message.slice(prefix.length);
  return message;
}
