import type { Principal } from '../auth/principal';
import { compileModelGlobs } from '../routing/model-glob';
import { gatewayName } from './mcp-tool-names';

/**
 * What one caller may reach through /mcp (docs/mcp.md): its team's servers (those still configured), and of their
 * tools those whose gateway name (`<server>__<tool>`) matches one of the team's globs and, when its token has a
 * narrower list, one of the token's. Nothing is permitted by default: a team with no `mcp.servers` reaches none.
 * The same check guards listing and calling, so a tool left out of a list can never be called by name.
 */
export class McpPermissions {
  private readonly servers: ReadonlySet<string>;
  private readonly teamTools: (name: string) => boolean;
  private readonly tokenTools: (name: string) => boolean;

  constructor(principal: Pick<Principal, 'mcp' | 'tokenMcpTools'>, configured: readonly string[]) {
    const team = principal.mcp ?? { servers: [], tools: [] };
    this.servers = new Set(team.servers.filter((id) => configured.includes(id)));
    this.teamTools = compileModelGlobs(team.tools);
    const narrower = principal.tokenMcpTools;
    this.tokenTools = narrower ? compileModelGlobs(narrower) : () => true;
  }

  /** The servers this caller may reach, in the order given. */
  permittedServers(all: readonly string[]): string[] {
    return all.filter((id) => this.servers.has(id));
  }

  mayReachServer(server: string): boolean {
    return this.servers.has(server);
  }

  /** Whether a tool of a server may be listed and called. */
  mayUseTool(server: string, tool: string): boolean {
    if (!this.servers.has(server)) return false;
    const name = gatewayName(server, tool);
    return this.teamTools(name) && this.tokenTools(name);
  }
}
