import { Catch, type ArgumentsHost, type ExceptionFilter } from '@nestjs/common';
import { ProtocolErrorCode } from '@modelcontextprotocol/server';
import type { Request, Response } from 'express';
import { AppLogger } from '../common/logging/logger';
import { sendError, toGatewayException } from '../core/errors/error-response';
import { resourceMetadataUrl } from './protected-resource';

/**
 * Errors of /mcp before the MCP server answers (no credentials, a revoked token, a body too large) in the shape
 * the Streamable HTTP transport gives its own: the HTTP status with a JSON-RPC error and no id. A 401 names the
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
        code:
          exception.status === 401 || exception.status === 403
            ? ProtocolErrorCode.InvalidRequest
            : ProtocolErrorCode.InternalError,
        message: exception.message,
        data: { code: exception.wireCode ?? exception.code },
      },
      id: null,
    });
  }
}
