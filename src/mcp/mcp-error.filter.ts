import { Catch, type ArgumentsHost, type ExceptionFilter } from '@nestjs/common';
import type { Request, Response } from 'express';
import { NOT_AN_OBJECT } from '../common/http/plain-json-body';
import { AppLogger } from '../common/logging/logger';
import { sendError, toGatewayException } from '../core/errors/error-response';
import type { GatewayException } from '../core/errors/gateway.exception';
import { JsonRpcCode } from './mcp-errors';
import { resourceMetadataUrl } from './protected-resource';

/**
 * Errors of /mcp before the MCP server answers (no credentials, a revoked token, a body that is not JSON or too
 * large) in the shape the Streamable HTTP transport gives its own: the HTTP status with a JSON-RPC error and no id,
 * its code as the SDK's transport gives it for the same refusal (jsonRpcCodeOf). A 401 names the
 * protected resource metadata (RFC 9728) in `WWW-Authenticate`, where MCP clients look for how to authenticate.
 */
@Catch()
export class McpErrorFilter implements ExceptionFilter {
  constructor(private readonly logger: AppLogger) {}

  catch(error: unknown, host: ArgumentsHost): void {
    const http = host.switchToHttp();
    const res = http.getResponse<Response>();
    const req = http.getRequest<Request>();
    const exception = toGatewayException(error, this.logger.pino);
    req.exchange?.failed(exception.wireCode ?? exception.code);
    if (res.headersSent) {
      if (!res.writableEnded) res.end();
      return;
    }
    if (exception.status === 401)
      res.setHeader('www-authenticate', `Bearer resource_metadata="${resourceMetadataUrl(req)}"`);
    sendError(res, exception, {
      jsonrpc: '2.0',
      error: {
        code: jsonRpcCodeOf(exception),
        message: exception.message,
        data: { code: exception.wireCode ?? exception.code },
      },
      id: null,
    });
  }
}

/**
 * The JSON-RPC code of a refusal: -32700 for a body that is not JSON (JSON-RPC's parse error), -32600 for JSON that
 * is no object; -32000 for the HTTP
 * refusals the SDK's transport answers with it (406, 413, 415); -32600 for any other refusal of the client's
 * request (401, 403, 404, 400); -32603 for the gateway's own failure.
 */
function jsonRpcCodeOf(exception: GatewayException): number {
  // JSON that is no object (a string, a number): parsed, but not a request (JSON-RPC 2.0, 5.1).
  if (exception.code === 'invalid_json')
    return exception.message === NOT_AN_OBJECT ? JsonRpcCode.InvalidRequest : JsonRpcCode.ParseError;
  if ([406, 413, 415].includes(exception.status)) return JsonRpcCode.ServerError;
  if (exception.status < 500) return JsonRpcCode.InvalidRequest;
  return JsonRpcCode.InternalError;
}
