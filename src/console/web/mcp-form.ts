/** A team's MCP permissions as the admin API shows and takes them (docs/mcp.md). */
export interface TeamMcp {
  servers: string[];
  tools: string[];
}

/** What a team with no MCP access holds: no server (and the API's default glob, `*`, for when one is given). */
export const NO_MCP: TeamMcp = { servers: [], tools: ['*'] };

/** `github__*, notes__read_*` (commas or spaces between) -> ['github__*', 'notes__read_*']. */
export function toolGlobsOf(text: string): string[] {
  return text.split(/[\s,]+/).filter(Boolean);
}

/**
 * The servers the form offers: every configured one (GET /admin/v1/mcp/servers, in its order), then any the team
 * has that is no longer configured (`configured: false`), so the form shows what the team holds and the API's
 * refusal of it names the server.
 */
export function serverChoices(
  configured: string[],
  team: TeamMcp,
): Array<{ id: string; configured: boolean }> {
  return [
    ...configured.map((id) => ({ id, configured: true })),
    ...team.servers.filter((id) => !configured.includes(id)).map((id) => ({ id, configured: false })),
  ];
}

/**
 * The PATCH body's `mcp` for what the form holds (servers ticked, the globs typed), or undefined when it is what
 * the team has. Servers keep the offered order. No server ticked is no MCP access at all: NO_MCP, whatever globs
 * are typed (they would name servers the team no longer has). Globs are sent as typed, an empty field as none
 * (the servers' prompts and resources only): `*` is how every tool is asked for, never a default the form fills.
 */
export function mcpChange(before: TeamMcp, servers: string[], toolsText: string): TeamMcp | undefined {
  const after = servers.length === 0 ? NO_MCP : { servers, tools: toolGlobsOf(toolsText) };
  const same = (a: string[], b: string[]) => a.join('\n') === b.join('\n');
  return same(after.servers, before.servers) && same(after.tools, before.tools) ? undefined : after;
}
