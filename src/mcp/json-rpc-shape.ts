/**
 * JSON-RPC batches (an array of messages) are refused on every revision (docs/mcp.md, batches): MCP removed them in
 * 2025-06-18 (and 2025-11-25 has none), the SDK's clients never send them, and the SDK's transport would take up to
 * 100 messages per POST, each list fanned out to every server, outside any limit. One message per POST is what
 * every limit counts.
 */
export const BATCH_REFUSED =
  'Invalid Request: JSON-RPC batches are not accepted (MCP removed them in revision 2025-06-18); send one message per request.';

/**
 * Why a POSTed body is not one JSON-RPC 2.0 message the endpoint takes, or null when it is one: an object with
 * `"jsonrpc": "2.0"` and a string `method` (a request or notification), or an `id` with a `result` or an `error` (a
 * response). JSON-RPC 2.0 (5.1) answers such a body with -32600 Invalid Request; the SDK's transport would answer
 * -32700 Parse error, which says the JSON did not parse, and it did. The SDK's schema still checks the rest.
 */
export function jsonRpcProblem(body: unknown): string | null {
  if (Array.isArray(body)) return BATCH_REFUSED;
  if (body === null || typeof body !== 'object')
    return 'Invalid Request: the body must be a JSON-RPC 2.0 message (a JSON object).';
  const message = body as Record<string, unknown>;
  if (message.jsonrpc !== '2.0') return 'Invalid Request: "jsonrpc" must be "2.0".';
  const isRequest = typeof message.method === 'string';
  const isResponse = 'id' in message && ('result' in message || 'error' in message);
  if (!isRequest && !isResponse)
    return 'Invalid Request: a JSON-RPC message needs a string "method" (or, as a response, an "id" and a "result" or "error").';
  return null;
}
