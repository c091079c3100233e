import { NOT_AN_OBJECT } from '../common/http/plain-json-body';
import type { ErrorShape } from '../core/errors/error-shape';
import type { GatewayException } from '../core/errors/gateway.exception';
import { JsonRpcCode } from './mcp-errors';

/**
 * How the gateway's errors look under /mcp (its endpoint, its servers' paths, and anything else under it: a path the
 * router cannot decode, one no route serves): the HTTP status with a JSON-RPC error and no id, as the Streamable HTTP
 * transport answers its own refusals. McpErrorFilter answers those of the MCP routes; the app's EndpointErrorFilter
 * those that reach no route.
 */
export const mcpErrors: ErrorShape = {
  body: (exception) => ({
    jsonrpc: '2.0',
    error: {
      code: jsonRpcCodeOf(exception),
      message: exception.message,
      data: { code: exception.wireCode ?? exception.code },
    },
    id: null,
  }),
  // The MCP routes answer one JSON body: nothing is streamed that an error could end in-band.
  streamEvent: () => '',
};

/** A path of the MCP endpoint: `/mcp` or anything under it. */
export function isMcpPath(path: string): boolean {
  return path === '/mcp' || path.startsWith('/mcp/');
}

/**
 * The JSON-RPC code of a refusal: -32700 for a body that is not JSON (JSON-RPC's parse error), -32600 for JSON that
 * is no object; -32000 for the HTTP refusals the SDK's transport answers with it (405, 406, 413, 415); -32600 for
 * any other refusal of the client's request (401, 403, 404, 400); -32603 for the gateway's own failure.
 */
function jsonRpcCodeOf(exception: GatewayException): number {
  // JSON that is no object (a string, a number): parsed, but not a request (JSON-RPC 2.0, 5.1).
  if (exception.code === 'invalid_json')
    return exception.message === NOT_AN_OBJECT ? JsonRpcCode.InvalidRequest : JsonRpcCode.ParseError;
  if ([405, 406, 413, 415].includes(exception.status)) return JsonRpcCode.ServerError;
  if (exception.status < 500) return JsonRpcCode.InvalidRequest;
  return JsonRpcCode.InternalError;
}
