import {
  Controller,
  Delete,
  Get,
  HttpCode,
  Param,
  Post,
  Req,
  Res,
  UseFilters,
  type OnModuleDestroy,
} from '@nestjs/common';
import type { AuthInfo, McpHttpHandler } from '@modelcontextprotocol/server';
import type { Request, Response } from 'express';
import { Public } from '../auth/route-access.decorators';
import { AppLogger } from '../common/logging/logger';
import { GatewayException } from '../core/errors/gateway.exception';
import { McpErrorFilter } from './mcp-error.filter';
import { JsonRpcCode } from './mcp-errors';
import { jsonRpcProblem } from './json-rpc-shape';
import { mcpSdk } from './mcp-sdk';
import { McpGatewayServers, type McpScope } from './mcp-gateway-server';
import { McpPermissions } from './mcp-permissions';
import { McpUpstreams } from './mcp-upstreams';
import { mcpResource } from './protected-resource';
import { sendWebResponse, webRequestOf } from './web-exchange';

/**
 * The MCP endpoint (docs/mcp.md): `/mcp` (every server the caller's team may reach, names `<server>__<tool>`) and
 * `/mcp/<server>` (one server, its own names), Streamable HTTP by the official SDK (@modelcontextprotocol/server),
 * authenticated by the global AuthGuard like every team route (a team token as Bearer or x-api-key). Both protocol
 * eras on one route, told apart per request by the SDK (isLegacyRequest: a request carrying the 2026-07-28
 * `_meta` envelope is modern, anything else is 2025-era): 2026-07-28 by the SDK's createMcpHandler, the 2025
 * revisions by its Streamable HTTP transport in stateless mode, answering JSON as before. Stateless either way: each
 * POST gets its own SDK server, no `Mcp-Session-Id` is issued, so any replica can answer any request and nothing is
 * kept between them (the upstream connections are the gateway's, per replica).
 */
@Controller('mcp')
@UseFilters(McpErrorFilter)
export class McpController implements OnModuleDestroy {
  /**
   * 2026-07-28 requests (the 2025 ones never reach it: `reject` would answer them unsupported-version). Made by the
   * first request, with the SDK (mcp-sdk.ts).
   */
  private modernHandler?: McpHttpHandler;

  constructor(
    private readonly servers: McpGatewayServers,
    private readonly upstreams: McpUpstreams,
    private readonly logger: AppLogger,
  ) {}

  async onModuleDestroy(): Promise<void> {
    await this.modernHandler?.close();
  }

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
    const sdk = mcpSdk();
    const scope: McpScope = { principal: req.exchange.principal!, req, only };
    // Fires when the client goes away before its answer is sent: the SDK abandons the exchange.
    const gone = new AbortController();
    res.once('close', () => {
      if (!res.writableFinished) gone.abort();
    });
    const request = webRequestOf(req, gone.signal);
    const parsedBody: unknown = req.body;
    // The SDK hands this to the server factory: who is asking (never the token itself, which stays with the auth
    // guard; the token id names the caller).
    const authInfo: AuthInfo = {
      token: '',
      clientId: scope.principal.tokenId,
      scopes: [],
      extra: { scope },
    };
    const answer = (await sdk.isLegacyRequest(request, parsedBody))
      ? await this.legacy(scope, request, parsedBody, authInfo)
      : await this.modern().fetch(request, { parsedBody, authInfo });
    await sendWebResponse(answer, res);
  }

  private modern(): McpHttpHandler {
    this.modernHandler ??= mcpSdk().createMcpHandler(
      ({ authInfo }) => this.servers.create(scopeOf(authInfo)),
      {
        legacy: 'reject',
        onerror: (error) => this.logger.pino.debug({ err: error }, 'MCP request refused or failed'),
      },
    );
    return this.modernHandler;
  }

  /**
   * A 2025-era request (2025-11-25, 2025-06-18 and older, `initialize` included): the SDK's stateless Streamable
   * HTTP transport with a server of its own, answering one JSON body as the 1.x SDK's did (the SDK's own legacy
   * fallback would answer an event stream).
   */
  private async legacy(
    scope: McpScope,
    request: globalThis.Request,
    parsedBody: unknown,
    authInfo: AuthInfo,
  ): Promise<globalThis.Response> {
    const server = this.servers.create(scope);
    const transport = new (mcpSdk().WebStandardStreamableHTTPServerTransport)({
      sessionIdGenerator: undefined,
      enableJsonResponse: true,
    });
    // A client that goes away closes the server (its handlers' signals fire, so upstream calls are abandoned); the
    // transport then never answers, and there is nobody to answer.
    const gone = new Promise<globalThis.Response>((resolve) => {
      const left = () => resolve(new globalThis.Response(null, { status: 499 }));
      if (request.signal.aborted) left();
      else request.signal.addEventListener('abort', left, { once: true });
    });
    try {
      await server.connect(transport);
      return await Promise.race([transport.handleRequest(request, { parsedBody, authInfo }), gone]);
    } finally {
      void transport.close().catch(() => undefined);
      void server.close().catch(() => undefined);
    }
  }
}

/** The caller the controller put in `authInfo` for the server factory. */
function scopeOf(authInfo: AuthInfo | undefined): McpScope {
  const scope = authInfo?.extra?.scope as McpScope | undefined;
  if (!scope) throw new Error('MCP request without its caller');
  return scope;
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
