import { Injectable } from '@nestjs/common';
import type { Server } from '@modelcontextprotocol/server';
import type { Request } from 'express';
import type { Principal } from '../auth/principal';
import { AppLogger } from '../common/logging/logger';
import { GatewayException } from '../core/errors/gateway.exception';
import { LimitsService } from '../limits/limits.service';
import { McpCallLog, type McpCallOutcome, type McpMethod } from './mcp-call-log';
import { JsonRpcCode, McpAnswerError } from './mcp-errors';
import { mcpSdk } from './mcp-sdk';
import { McpPermissions } from './mcp-permissions';
import { templateMatches } from './uri-template';
import { gatewayName, splitGatewayName } from './mcp-tool-names';
import { GATEWAY_IMPLEMENTATION, McpUpstreams, UpstreamFailure } from './mcp-upstreams';

/**
 * The JSON-RPC error code of a tool call refused by a limit (toolCallsPerMinute): in the range JSON-RPC leaves to
 * servers, outside the codes MCP reserves (-32020 to -32099); `data` says which limit and when to retry.
 */
export const LIMIT_REACHED = -32010;

/** Where a refused call that named no configured server is counted and logged (a bounded label). */
const UNKNOWN_SERVER = '(none)';

/** Who is asking, and through which endpoint: `/mcp` (every permitted server, names prefixed) or `/mcp/<server>`. */
export interface McpScope {
  principal: Principal;
  req: Request;
  /** `/mcp/<server>`: that server alone, its own names. */
  only?: string;
}

/**
 * Builds the MCP server (the official SDK's low-level Server) that answers one HTTP request of a caller: tools,
 * prompts and resources of the servers the caller may reach, each list fanned out to them at
 * once and filtered by McpPermissions, each call routed to its server by name and checked again there. A server
 * that fails to list is left out of the list (logged and counted by McpUpstreams); a call to it is an MCP error
 * within its timeoutMs.
 */
@Injectable()
export class McpGatewayServers {
  constructor(
    private readonly upstreams: McpUpstreams,
    private readonly limits: LimitsService,
    private readonly callLog: McpCallLog,
    private readonly logger: AppLogger,
  ) {}

  create(scope: McpScope): Server {
    const permissions = new McpPermissions(scope.principal, this.upstreams.ids());
    const servers = scope.only ? [scope.only] : permissions.permittedServers(this.upstreams.ids());
    const name = (server: string, own: string) => (scope.only ? own : gatewayName(server, own));
    // On /mcp/<server> a list is that server's own: its failure is the client's MCP error, not an empty list.
    const only = scope.only;
    const gather = <T>(list: (id: string) => Promise<T[]>) =>
      only ? list(only).then((items) => [{ id: only, items }]) : this.fanOut(servers, list);
    const server = new (mcpSdk().Server)(GATEWAY_IMPLEMENTATION, {
      capabilities: { tools: {}, prompts: {}, resources: {} },
    });

    server.setRequestHandler('tools/list', async (_request, ctx) => {
      const lists = await gather((id) => this.upstreams.listTools(id, ctx.mcpReq.signal));
      return {
        tools: lists.flatMap(({ id, items }) =>
          items
            .filter((tool) => permissions.mayUseTool(id, tool.name))
            .map((tool) => ({ ...tool, name: name(id, tool.name) })),
        ),
      };
    });

    server.setRequestHandler('tools/call', async (request, ctx) => {
      const { name: asked, arguments: args } = request.params;
      const target = this.route(scope, asked);
      if (!target || !permissions.mayUseTool(target.server, target.name)) {
        // A name that names no configured server is refused too, and logged under the server `(none)`.
        this.refused(scope, 'tools/call', target?.server, target?.name ?? asked, args, 'tool_not_permitted');
        throw new McpAnswerError(
          JsonRpcCode.InvalidParams,
          `Tool "${asked}" is not available to this token (unknown, or not permitted for its team).`,
        );
      }
      const call = { method: 'tools/call', server: target.server, name: target.name, args } as const;
      return this.governed(scope, call, ctx.mcpReq.signal, () =>
        this.upstreams.callTool(target.server, target.name, args, ctx.mcpReq.signal),
      );
    });

    server.setRequestHandler('prompts/list', async (_request, ctx) => {
      const lists = await gather((id) => this.upstreams.listPrompts(id, ctx.mcpReq.signal));
      return {
        prompts: lists.flatMap(({ id, items }) =>
          items.map((prompt) => ({ ...prompt, name: name(id, prompt.name) })),
        ),
      };
    });

    server.setRequestHandler('prompts/get', async (request, ctx) => {
      const { name: asked, arguments: args } = request.params;
      const target = this.route(scope, asked);
      if (!target || !permissions.mayReachServer(target.server)) {
        this.refused(
          scope,
          'prompts/get',
          target?.server,
          target?.name ?? asked,
          args,
          'prompt_not_permitted',
        );
        throw new McpAnswerError(
          JsonRpcCode.InvalidParams,
          `Prompt "${asked}" is not available to this token.`,
        );
      }
      const get = { method: 'prompts/get', server: target.server, name: target.name, args } as const;
      return this.governed(scope, get, ctx.mcpReq.signal, () =>
        this.upstreams.getPrompt(target.server, target.name, args, ctx.mcpReq.signal),
      );
    });

    // Resources keep their servers' own URIs (a tool's answer may link one as it is): on /mcp a read goes to the
    // first server, in configured order, that lists the URI, else to the first whose URI template matches it; a URI
    // two servers list is listed once, as the one a read reaches.
    server.setRequestHandler('resources/list', async (_request, ctx) => ({
      resources: firstOfEach(
        await gather((id) => this.upstreams.listResources(id, ctx.mcpReq.signal)),
        (resource) => resource.uri,
      ),
    }));
    server.setRequestHandler('resources/templates/list', async (_request, ctx) => ({
      resourceTemplates: firstOfEach(
        await gather((id) => this.upstreams.listResourceTemplates(id, ctx.mcpReq.signal)),
        (template) => template.uriTemplate,
      ),
    }));
    server.setRequestHandler('resources/read', async (request, ctx) => {
      const uri = request.params.uri;
      const startedAt = process.hrtime.bigint();
      // Admitted before the servers are asked which has the URI: asking costs every permitted server two lists, so
      // a read of a URI no server has counts against toolCallsPerMinute too (once: it is then logged as refused).
      // Limited on /mcp, its server is not known yet: it is logged under `(none)`.
      const asked: GovernedCall = {
        method: 'resources/read',
        server: scope.only ?? UNKNOWN_SERVER,
        name: uri,
        args: { uri },
      };
      await this.admit(scope, asked, startedAt);
      const owner = scope.only ?? (await this.ownerOf(servers, uri, ctx.mcpReq.signal));
      if (!owner) {
        // The client left while the servers' lists were read: it was not refused, it went away.
        const outcome = ctx.mcpReq.signal.aborted ? 'aborted' : 'refused';
        this.refused(scope, 'resources/read', undefined, uri, { uri }, 'resource_not_permitted', outcome);
        throw new McpAnswerError(
          JsonRpcCode.InvalidParams,
          `Resource "${uri}" is not available to this token.`,
        );
      }
      const read: GovernedCall = { ...asked, server: owner };
      return this.send(scope, read, ctx.mcpReq.signal, startedAt, () =>
        this.upstreams.readResource(owner, uri, ctx.mcpReq.signal),
      );
    });
    return server;
  }

  /** The server and its own name a client's name stands for, or null when it names none. */
  private route(scope: McpScope, requested: string): { server: string; name: string } | null {
    if (scope.only) return { server: scope.only, name: requested };
    const split = splitGatewayName(requested);
    return split && this.upstreams.has(split.server) ? split : null;
  }

  /**
   * The server a resource URI belongs to, among `servers` in their configured order: the first whose list names it,
   * else the first with a URI template that matches it; undefined when none does.
   */
  private async ownerOf(servers: string[], uri: string, signal: AbortSignal): Promise<string | undefined> {
    const named = await firstInOrder(
      servers,
      (id) => this.upstreams.listResources(id, signal),
      (resource) => resource.uri === uri,
    );
    return (
      named ??
      firstInOrder(
        servers,
        (id) => this.upstreams.listResourceTemplates(id, signal),
        (template) => templateMatches(template.uriTemplate, uri),
      )
    );
  }

  /** Each server's list at once; a server that fails is left out (McpUpstreams has logged and counted it). */
  private async fanOut<T>(
    servers: string[],
    list: (id: string) => Promise<T[]>,
  ): Promise<Array<{ id: string; items: T[] }>> {
    const settled = await Promise.allSettled(servers.map(async (id) => ({ id, items: await list(id) })));
    return settled.flatMap((result) => (result.status === 'fulfilled' ? [result.value] : []));
  }

  /**
   * A permitted request that does work on one server (a tool call, a prompt get, a resource read): admitted by the
   * tool-call limits (toolCallsPerMinute counts all three), sent, recorded however it ends. A client that goes away
   * meanwhile is recorded as having left (`aborted`), not as the server failing.
   */
  private async governed<R>(
    scope: McpScope,
    call: GovernedCall,
    signal: AbortSignal,
    send: () => Promise<R>,
  ): Promise<R> {
    const startedAt = process.hrtime.bigint();
    await this.admit(scope, call, startedAt);
    return this.send(scope, call, signal, startedAt, send);
  }

  /** Counts the call against the tool-call limits; over one (or limits unknowable), records it and refuses it. */
  private async admit(scope: McpScope, call: GovernedCall, startedAt: bigint): Promise<void> {
    try {
      await this.limits.admitToolCall(scope.principal);
    } catch (error) {
      const refusal = error instanceof GatewayException ? error : undefined;
      this.record(scope, call, 'limited', refusal?.code ?? 'limits_unavailable', startedAt);
      throw new McpAnswerError(
        refusal?.status === 429 ? LIMIT_REACHED : JsonRpcCode.InternalError,
        refusal?.message ?? 'The tool call limits cannot be checked.',
        refusal && {
          code: refusal.code,
          ...(refusal.headers['retry-after']
            ? { retryAfterSeconds: Number(refusal.headers['retry-after']) }
            : {}),
        },
      );
    }
  }

  /** Sends an admitted call and records it however it ends. */
  private async send<R>(
    scope: McpScope,
    call: GovernedCall,
    signal: AbortSignal,
    startedAt: bigint,
    send: () => Promise<R>,
  ): Promise<R> {
    try {
      const result = await send();
      const failed = (result as { isError?: unknown }).isError === true && call.method === 'tools/call';
      this.record(scope, call, failed ? 'tool_error' : 'ok', failed ? 'tool_error' : null, startedAt, result);
      return result;
    } catch (error) {
      if (signal.aborted) {
        this.record(scope, call, 'aborted', null, startedAt);
        throw error;
      }
      const outcome: McpCallOutcome = error instanceof UpstreamFailure ? error.reason : 'error';
      const code = error instanceof McpAnswerError ? `mcp_${error.code}` : 'mcp_error';
      this.record(scope, call, outcome, outcome === 'error' ? code : `mcp_server_${outcome}`, startedAt);
      if (!(error instanceof McpAnswerError))
        this.logger.pino.warn(
          { err: error, server: call.server, method: call.method },
          'MCP request to a server failed',
        );
      throw error;
    }
  }

  /**
   * A request refused before it was sent: not permitted, or (a server of `undefined`) naming no server; or one whose
   * client left before the gateway knew where to send it (`aborted`).
   */
  private refused(
    scope: McpScope,
    method: McpMethod,
    server: string | undefined,
    name: string,
    args: unknown,
    errorCode: string,
    outcome: 'refused' | 'aborted' = 'refused',
  ): void {
    const call = { method, server: server ?? UNKNOWN_SERVER, name, args };
    this.record(scope, call, outcome, outcome === 'refused' ? errorCode : null, process.hrtime.bigint());
  }

  private record(
    scope: McpScope,
    call: GovernedCall,
    outcome: McpCallOutcome,
    errorCode: string | null,
    startedAt: bigint,
    result?: unknown,
  ): void {
    this.callLog.record({
      principal: scope.principal,
      req: scope.req,
      method: call.method,
      server: call.server,
      name: call.name,
      listed:
        call.method === 'tools/call' &&
        outcome !== 'refused' &&
        this.upstreams.listed(call.server, call.name),
      outcome,
      errorCode,
      startedAt,
      arguments: call.args,
      result,
    });
  }
}

/** What a governed request is: its method, the server it goes to, its tool's or prompt's name or URI, and args. */
interface GovernedCall {
  method: McpMethod;
  server: string;
  name: string;
  args: unknown;
}

/** The servers' lists as one, an item whose key an earlier server's list already had left out. */
function firstOfEach<T>(lists: Array<{ items: T[] }>, key: (item: T) => string): T[] {
  const seen = new Set<string>();
  return lists.flatMap(({ items }) =>
    items.filter((item) => !seen.has(key(item)) && seen.add(key(item)) !== undefined),
  );
}

/**
 * The first of `servers`, in their order, whose list has an item that `wanted`: every list asked at once, and the
 * answer as soon as the servers before the one that has it have answered (or failed), so a slow server later in the
 * order costs nothing. A server that fails counts as not having it.
 */
export async function firstInOrder<T>(
  servers: string[],
  list: (id: string) => Promise<T[]>,
  wanted: (item: T) => boolean,
): Promise<string | undefined> {
  const lists = servers.map((id) => list(id).catch((): T[] => []));
  for (let i = 0; i < servers.length; i++) if ((await lists[i]).some(wanted)) return servers[i];
  return undefined;
}
