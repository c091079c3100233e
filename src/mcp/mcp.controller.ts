import { Controller, Delete, Get, HttpCode, Param, Post, Req, Res, UseFilters } from '@nestjs/common';
import type { Request, Response } from 'express';
import { Public } from '../auth/route-access.decorators';
import { GatewayException } from '../core/errors/gateway.exception';
import { McpErrorFilter } from './mcp-error.filter';
import { JsonRpcCode } from './mcp-errors';
import { jsonRpcProblem } from './json-rpc-shape';
import { mcpSdk } from './mcp-sdk';
import { McpGatewayServers } from './mcp-gateway-server';
import { McpPermissions } from './mcp-permissions';
import { McpUpstreams } from './mcp-upstreams';
import { mcpResource } from './protected-resource';

/**
 * The MCP endpoint (docs/mcp.md): `/mcp` (every server the caller's team may reach, names `<server>__<tool>`) and
 * `/mcp/<server>` (one server, its own names), Streamable HTTP by the official SDK's transport, authenticated by
 * the global AuthGuard like every team route (a team token as Bearer or x-api-key). Stateless: each POST gets its
 * own SDK server and transport, no `Mcp-Session-Id` is issued, so any replica can answer any request and nothing
 * is kept between them (the SDK's stateless mode; the upstream connections are the gateway's, per replica).
 */
@Controller('mcp')
@UseFilters(McpErrorFilter)
export class McpController {
  constructor(
    private readonly servers: McpGatewayServers,
    private readonly upstreams: McpUpstreams,
  ) {}

  @Post()
  async all(@Req() req: Request, @Res() res: Response): Promise<void> {
    await this.serve(req, res, undefined);
  }

  @Post(':server')
  async one(@Param('server') server: string, @Req() req: Request, @Res() res: Response): Promise<void> {
    const principal = req.exchange.principal!;
    const permissions = new McpPermissions(principal, this.upstreams.ids());
    if (!this.upstreams.has(server) || !permissions.mayReachServer(server))
      throw new GatewayException('not_found', `No MCP server "${server}" is available to this token.`);
    await this.serve(req, res, server);
  }

  /** No server-to-client stream and no sessions to end: stateless (the spec's 405 for a server without them). */
  @Get()
  @HttpCode(405)
  noStream(@Res({ passthrough: true }) res: Response) {
    return methodNotAllowed(res);
  }

  @Get(':server')
  @HttpCode(405)
  noStreamOfOne(@Res({ passthrough: true }) res: Response) {
    return methodNotAllowed(res);
  }

  @Delete()
  @HttpCode(405)
  noSession(@Res({ passthrough: true }) res: Response) {
    return methodNotAllowed(res);
  }

  @Delete(':server')
  @HttpCode(405)
  noSessionOfOne(@Res({ passthrough: true }) res: Response) {
    return methodNotAllowed(res);
  }

  private async serve(req: Request, res: Response, only: string | undefined): Promise<void> {
    // A body that parsed as JSON (else the BodyReaderGuard refused it: McpErrorFilter) but is no JSON-RPC message.
    // No body at all is left to the SDK's transport (its -32700).
    const problem = req.body === undefined ? null : jsonRpcProblem(req.body);
    if (problem) {
      req.exchange.failed('invalid_request');
      res
        .status(400)
        .json({ jsonrpc: '2.0', error: { code: JsonRpcCode.InvalidRequest, message: problem }, id: null });
      return;
    }
    const server = this.servers.create({ principal: req.exchange.principal!, req, only });
    const transport = new (mcpSdk().StreamableHTTPServerTransport)({
      sessionIdGenerator: undefined,
      enableJsonResponse: true,
    });
    res.once('close', () => {
      void transport.close();
      void server.close();
    });
    await server.connect(transport);
    await transport.handleRequest(req, res, req.body);
  }
}

function methodNotAllowed(res: Response) {
  res.setHeader('allow', 'POST');
  return {
    jsonrpc: '2.0',
    error: { code: -32000, message: 'Method not allowed: this endpoint is stateless (POST only).' },
    id: null,
  };
}

/**
 * RFC 9728 Protected Resource Metadata for /mcp: where MCP clients learn how to authenticate after a 401. The
 * gateway takes its own team tokens (as a bearer token in a header), issued by its admins, not an OAuth
 * authorization server's, so none is listed.
 */
@Public()
@Controller('.well-known')
export class ProtectedResourceController {
  @Get(['oauth-protected-resource', 'oauth-protected-resource/mcp'])
  metadata(@Req() req: Request) {
    return {
      resource: mcpResource(req),
      bearer_methods_supported: ['header'],
      resource_name: 'Switchyard MCP gateway',
    };
  }
}
