import { Controller, Get } from '@nestjs/common';
import { Requires } from '../access/requires.decorator';
import { AdminOnly } from '../auth/route-access.decorators';
import { GatewayConfig } from '../config/config.schema';
import { McpUpstreams } from './mcp-upstreams';

/**
 * GET /admin/v1/mcp/servers: every configured MCP server (docs/mcp.md) with its health and its tools as this replica
 * sees them now: each is asked for its tools (within its timeoutMs, all at once), so the answer is fresh; but not a
 * server in its back-off after failing, nor one whose back-off is over and waits for its probe: reading the page
 * neither waits for a server known to fail nor takes the probe (its verdict, and its wait, are an agent's request's),
 * so such a server is shown as it was left (down, its last error, when it is tried again). Where a remote server
 * is, without its path's query or its headers (credentials); a local one's command, not its env.
 */
@AdminOnly()
@Controller('admin/v1/mcp/servers')
export class McpServersController {
  constructor(
    private readonly upstreams: McpUpstreams,
    private readonly config: GatewayConfig,
  ) {}

  @Get()
  @Requires('deployments:read')
  async list() {
    const tools = new Map(
      await Promise.all(
        this.upstreams.ids().map(async (id) => {
          const listed = await this.upstreams.listTools(id, undefined, true, false).then(
            (found) => found.map((tool) => ({ name: tool.name, description: tool.description ?? null })),
            () => null,
          );
          return [id, listed] as const;
        }),
      ),
    );
    return {
      object: 'list',
      data: this.upstreams.health().map((server) => {
        const config = this.config.mcp.servers[server.id];
        const url = config.url ? new URL(config.url) : undefined;
        return {
          id: server.id,
          kind: server.kind,
          url: url ? `${url.origin}${url.pathname}` : null,
          command: config.command ?? null,
          timeout_ms: config.timeoutMs,
          /** up: it listed its tools just now; down: it could not (last_error says why). */
          status: tools.get(server.id) ? 'up' : 'down',
          last_error: server.lastError,
          /** While it is skipped after failing: when it is next tried; else null. */
          retry_at: server.retryAt,
          /** Its tools, under their own names (the gateway's: `<id>__<name>`); null when it could not list them. */
          tools: tools.get(server.id) ?? null,
        };
      }),
    };
  }
}
