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
import { MCP_SERVER_ID } from '../config/config.loader';
import { GatewayConfig } from '../config/config.schema';
import { GatewayException } from '../core/errors/gateway.exception';
import { McpErrorFilter } from './mcp-error.filter';
import { JsonRpcCode } from './mcp-errors';
import { jsonRpcProblem } from './json-rpc-shape';
import { mcpSdk } from './mcp-sdk';
import { McpGatewayServers, type McpScope } from './mcp-gateway-server';
import { McpPermissions } from './mcp-permissions';
import { McpSessions } from './mcp-sessions';
import { McpUpstreams } from './mcp-upstreams';
import { mcpResource } from './protected-resource';
import { sendWebResponse, webRequestOf } from './web-exchange';

/**
 * The MCP endpoint (docs/mcp.md): `/mcp` (every server the caller's team may reach, names `<server>__<tool>`) and
 * `/mcp/<server>` (one server, its own names), Streamable HTTP by the official SDK (@modelcontextprotocol/server),
 * authenticated by the global AuthGuard like every team route (a team token as Bearer or x-api-key). Both protocol
 * eras on one route, told apart per request by the SDK (isLegacyRequest: a request carrying the 2026-07-28
 * `_meta` envelope is modern, anything else is 2025-era): 2026-07-28 by the SDK's createMcpHandler, the 2025
 * revisions by its Streamable HTTP transport in stateless mode, answering JSON. Each POST gets its own SDK server,
 * so any replica can answer any request. On the 2025 revisions an `initialize` opens an `Mcp-Session-Id` session and
 * later requests naming one are checked against it first (mcp-sessions.ts, in Redis: known to every replica); the
 * SDK's transport still serves each request on its own. The upstream connections are the gateway's, per replica.
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
    private readonly sessions: McpSessions,
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
    this.mustReach(req, server);
    await this.serve(req, res, server);
  }

  /** No server-to-client stream: the spec's 405 for a server that offers none (on any revision). */
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

  /** Ends the 2025 session the request names (mcp-sessions.ts). */
  @Delete()
  async endSession(@Req() req: Request, @Res() res: Response): Promise<void> {
    await this.end(req, res, undefined);
  }

  @Delete(':server')
  async endSessionOfOne(
    @Param('server') server: string,
    @Req() req: Request,
    @Res() res: Response,
  ): Promise<void> {
    this.mustReach(req, server);
    await this.end(req, res, server);
  }

  /** `/mcp/<server>` of a server the caller's team may not reach is none of its business: 404, as if unknown. */
  private mustReach(req: Request, server: string): void {
    const permissions = new McpPermissions(req.exchange.principal!, this.upstreams.ids());
    if (!this.upstreams.has(server) || !permissions.mayReachServer(server))
      throw new GatewayException('not_found', `No MCP server "${server}" is available to this token.`);
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
    if (!(await sdk.isLegacyRequest(request, parsedBody))) {
      await sendWebResponse(await this.modern().fetch(request, { parsedBody, authInfo }), res);
      return;
    }
    // A 2025-era request: the session it names is checked first (an initialize opens one instead).
    const route = routeOf(only);
    const opening = isInitialize(parsedBody);
    const sessionId = req.get('mcp-session-id');
    if (!opening && sessionId !== undefined) {
      const state = await this.sessions.check(sessionId, scope.principal, route);
      if (state === 'unknown') return sessionNotFound(req, res);
    }
    const answer = await this.legacy(scope, request, parsedBody, authInfo);
    if (opening && (await answered(answer))) {
      const opened = await this.sessions.open(scope.principal, route);
      if (opened) res.setHeader('mcp-session-id', opened);
    }
    await sendWebResponse(answer, res);
  }

  private async end(req: Request, res: Response, only: string | undefined): Promise<void> {
    const sessionId = req.get('mcp-session-id');
    if (sessionId === undefined) {
      req.exchange.failed('invalid_request');
      res
        .status(400)
        .json(jsonRpcError(JsonRpcCode.ServerError, 'Bad Request: Mcp-Session-Id header is required'));
      return;
    }
    const state = await this.sessions.end(sessionId, req.exchange.principal!, routeOf(only));
    if (state === 'unknown') return sessionNotFound(req, res);
    if (state === 'unchecked') {
      req.exchange.failed('mcp_sessions_unavailable');
      res
        .status(503)
        .setHeader('retry-after', '1')
        .json(
          jsonRpcError(
            JsonRpcCode.InternalError,
            'The session cannot be ended now: the gateway cannot reach its session store. Try again shortly.',
          ),
        );
      return;
    }
    res.status(204).end();
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
  res.setHeader('allow', 'POST, DELETE');
  return jsonRpcError(
    JsonRpcCode.ServerError,
    'Method not allowed: this endpoint opens no server-to-client stream (POST; DELETE ends a session).',
  );
}

function jsonRpcError(code: number, message: string) {
  return { jsonrpc: '2.0', error: { code, message }, id: null };
}

function routeOf(only: string | undefined): string {
  return only === undefined ? '/mcp' : `/mcp/${only}`;
}

function isInitialize(body: unknown): boolean {
  return typeof body === 'object' && body !== null && (body as { method?: unknown }).method === 'initialize';
}

/** The SDK answered an initialize with its result (not a JSON-RPC error, not an HTTP refusal). */
async function answered(answer: globalThis.Response): Promise<boolean> {
  if (answer.status !== 200 || !answer.headers.get('content-type')?.startsWith('application/json'))
    return false;
  const body: unknown = await answer
    .clone()
    .json()
    .catch(() => undefined);
  return typeof body === 'object' && body !== null && 'result' in body;
}

/**
 * A session id the gateway does not know for this caller and route (never issued, ended, expired, or another
 * token's): the spec's 404, on which the client starts a new session with initialize. The SDK's transport answers
 * its own unknown sessions so (-32001).
 */
function sessionNotFound(req: Request, res: Response): void {
  req.exchange.failed('mcp_session_not_found');
  res.status(404).json(jsonRpcError(JsonRpcCode.SessionNotFound, 'Session not found'));
}

/**
 * RFC 9728 Protected Resource Metadata for /mcp and each /mcp/<server>: where MCP clients learn how to authenticate
 * after a 401 (its `WWW-Authenticate` names the document of the resource asked for). The gateway takes its own team
 * tokens (as a bearer token in a header), issued by its admins, not an OAuth authorization server's, so none is
 * listed. Public: a server's document is served for any well-formed id, configured or not, so it tells an
 * unauthenticated caller nothing of which servers exist (as their 401 does not).
 */
@Public()
@Controller('.well-known')
export class ProtectedResourceController {
  constructor(private readonly config: GatewayConfig) {}

  /** The bare well-known path too: the address the gateway's 401 named before it named the path-aware one. */
  @Get(['oauth-protected-resource', 'oauth-protected-resource/mcp'])
  metadata(@Req() req: Request) {
    return this.document(req, undefined);
  }

  @Get('oauth-protected-resource/mcp/:server')
  metadataOfOne(@Param('server') server: string, @Req() req: Request) {
    if (!MCP_SERVER_ID.test(server))
      throw new GatewayException('not_found', `"${server}" is not an MCP server id.`);
    return this.document(req, server);
  }

  private document(req: Request, server: string | undefined) {
    return {
      resource: mcpResource(req, this.config.server.publicUrl, server),
      bearer_methods_supported: ['header'],
      resource_name: server === undefined ? 'Switchyard MCP gateway' : `Switchyard MCP gateway: ${server}`,
    };
  }
}
