/**
 * The JSON-RPC and MCP error codes the gateway answers with: JSON-RPC 2.0's own (-32700 to -32603) and those the MCP
 * SDK defines (its ErrorCode), as numbers, so that the HTTP layer's errors need no SDK loaded.
 */
export const JsonRpcCode = {
  /** Not JSON. */
  ParseError: -32700,
  /** JSON, but not a JSON-RPC request (JSON-RPC 2.0, 5.1), or refused before it is served. */
  InvalidRequest: -32600,
  InvalidParams: -32602,
  InternalError: -32603,
  /** The SDK's transport answers its HTTP refusals (406, 413, 415) with it; also its "connection closed". */
  ServerError: -32000,
  /** The SDK client's "connection closed" (the same number). */
  ConnectionClosed: -32000,
  /** The SDK's "request timed out". */
  RequestTimeout: -32001,
} as const;

/**
 * An MCP error the gateway answers a client with. Not the SDK's McpError: that one's constructor puts
 * `MCP error <code>: ` before its message, the SDK's server sends the message as it is, and the client's SDK puts
 * the prefix before it again (`MCP error -32603: MCP error -32603: ...`). The SDK's server sends any thrown error's
 * `code`, `message` and `data`, so this message is read once.
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

/** An SDK McpError's message without the `MCP error <code>: ` its constructor put before it. */
export function withoutPrefix(error: { code: number; message: string }): string {
  const prefix = `MCP error ${error.code}: `;
  let message = error.message;
  while (message.startsWith(prefix)) message = message.slice(prefix.length);
  return message;
}
