import { Catch, type ArgumentsHost, type ExceptionFilter } from '@nestjs/common';
import type { Request, Response } from 'express';
import { AppLogger } from '../common/logging/logger';
import { GatewayConfig } from '../config/config.schema';
import { sendError, toGatewayException } from '../core/errors/error-response';
import { mcpErrors } from './mcp-error-shape';
import { resourceMetadataUrl, serverOfPath } from './protected-resource';

/**
 * Errors of /mcp before the MCP server answers (no credentials, a revoked token, a body that is not JSON or too
 * large) in the shape the Streamable HTTP transport gives its own (mcp-error-shape.ts). A 401 names the
 * protected resource metadata (RFC 9728) in `WWW-Authenticate`, where MCP clients look for how to authenticate.
 */
@Catch()
export class McpErrorFilter implements ExceptionFilter {
  constructor(
    private readonly logger: AppLogger,
    private readonly config: GatewayConfig,
  ) {}

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
    if (exception.status === 401) res.setHeader('www-authenticate', this.challenge(req));
    sendError(res, exception, mcpErrors.body(exception));
  }

  /**
   * The 401's challenge: the metadata of the resource asked for (`/mcp` or `/mcp/<server>`), and RFC 6750's
   * `invalid_token` when a credential was sent and refused (none when the request carried none, as RFC 6750 says).
   */
  private challenge(req: Request): string {
    const metadata = resourceMetadataUrl(req, this.config.server.publicUrl, serverOfPath(req.path));
    const sent = req.headers.authorization !== undefined || req.headers['x-api-key'] !== undefined;
    return sent
      ? `Bearer error="invalid_token", resource_metadata="${metadata}"`
      : `Bearer resource_metadata="${metadata}"`;
  }
}
