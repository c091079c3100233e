import { McpPermissions } from '../../src/mcp/mcp-permissions';
import { gatewayName, splitGatewayName } from '../../src/mcp/mcp-tool-names';

describe('MCP tool names: <server>__<tool>', () => {
  it('prefixes a tool with its server and splits on the first separator, so a tool keeps its own "__"', () => {
    expect(gatewayName('github', 'get_issue')).toBe('github__get_issue');
    expect(splitGatewayName('github__get_issue')).toEqual({ server: 'github', name: 'get_issue' });
    expect(splitGatewayName(gatewayName('db', 'run__query'))).toEqual({ server: 'db', name: 'run__query' });
  });

  it('a name without a server part, or without a tool part, names nothing', () => {
    for (const name of ['get_issue', '__get_issue', 'github__', '', 'github_get_issue'])
      expect(splitGatewayName(name)).toBeNull();
  });
});

describe('MCP permissions', () => {
  const configured = ['github', 'notes', 'jira'];

  it('nothing by default: a team with no MCP settings reaches no server and no tool', () => {
    const none = new McpPermissions({}, configured);
    expect(none.permittedServers(configured)).toEqual([]);
    expect(none.mayUseTool('github', 'get_issue')).toBe(false);
  });

  it("a team's servers, of those configured, and of their tools those its globs match by gateway name", () => {
    const team = new McpPermissions(
      { mcp: { servers: ['github', 'notes', 'gone'], tools: ['github__get_*', 'notes__*'] } },
      configured,
    );
    expect(team.permittedServers(configured)).toEqual(['github', 'notes']);
    expect(team.mayReachServer('gone')).toBe(false);
    expect(team.mayUseTool('github', 'get_issue')).toBe(true);
    expect(team.mayUseTool('github', 'delete_repo')).toBe(false);
    expect(team.mayUseTool('notes', 'anything')).toBe(true);
    // A glob naming a server the team does not have grants nothing there.
    expect(
      new McpPermissions({ mcp: { servers: ['notes'], tools: ['*'] } }, configured).mayUseTool('jira', 'x'),
    ).toBe(false);
  });

  it('a glob is matched whole and its other characters literally', () => {
    const team = new McpPermissions(
      { mcp: { servers: ['github'], tools: ['github__get.issue'] } },
      configured,
    );
    expect(team.mayUseTool('github', 'get.issue')).toBe(true);
    expect(team.mayUseTool('github', 'getXissue')).toBe(false);
    expect(team.mayUseTool('github', 'get.issue_extra')).toBe(false);
  });

  it("a token narrows its team's tools, never widens them", () => {
    const mcp = { servers: ['github', 'notes'], tools: ['github__get_*', 'notes__*'] };
    const token = new McpPermissions(
      { mcp, tokenMcpTools: ['github__get_issue', 'github__delete_repo'] },
      configured,
    );
    expect(token.mayUseTool('github', 'get_issue')).toBe(true);
    expect(token.mayUseTool('github', 'get_pull')).toBe(false);
    expect(token.mayUseTool('github', 'delete_repo')).toBe(false);
    expect(token.mayUseTool('notes', 'read')).toBe(false);
    expect(new McpPermissions({ mcp, tokenMcpTools: null }, configured).mayUseTool('notes', 'read')).toBe(
      true,
    );
  });
});
