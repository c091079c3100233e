/**
 * Why a POSTed body is not one JSON-RPC 2.0 message the endpoint takes, or null when it is one: an object with
 * `"jsonrpc": "2.0"` and a string `method` (a request or notification), or an `id` with a `result` or an `error` (a
 * response). JSON-RPC 2.0 (5.1) answers such a body with -32600 Invalid Request; the SDK's transport would answer
 * -32700 Parse error, which says the JSON did not parse, and it did. The SDK's schema still checks the rest.
 */
export function jsonRpcProblem(body: unknown): string | null {
  if (body === null || typeof body !== 'object' || Array.isArray(body))
    return 'Invalid Request: the body must be a JSON-RPC 2.0 message (a JSON object).';
  const message = body as Record<string, unknown>;
  if (message.jsonrpc !== '2.0') return 'Invalid Request: "jsonrpc" must be "2.0".';
  const isRequest = typeof message.method === 'string';
  const isResponse = 'id' in message && ('result' in message || 'error' in message);
  if (!isRequest && !isResponse)
    return 'Invalid Request: a JSON-RPC message needs a string "method" (or, as a response, an "id" and a "result" or "error").';
  return null;
}
