import { mcpChange, NO_MCP, serverChoices, toolGlobsOf } from '../../src/console/web/mcp-form';

describe("the console's MCP permissions form", () => {
  const team = { servers: ['github'], tools: ['github__get_*'] };

  it('reads the globs typed with commas or spaces between them', () => {
    expect(toolGlobsOf(' github__get_*, notes__*  search__read_*,,')).toEqual([
      'github__get_*',
      'notes__*',
      'search__read_*',
    ]);
    expect(toolGlobsOf('  ')).toEqual([]);
  });

  it('offers every configured server, then those the team has that are no longer configured', () => {
    expect(serverChoices(['github', 'notes'], { servers: ['gone', 'notes'], tools: ['*'] })).toEqual([
      { id: 'github', configured: true },
      { id: 'notes', configured: true },
      { id: 'gone', configured: false },
    ]);
  });

  it('sends the servers ticked and the globs typed, or nothing when they are what the team has', () => {
    expect(mcpChange(team, ['github'], 'github__get_*')).toBeUndefined();
    expect(mcpChange(NO_MCP, [], '*')).toBeUndefined();
    expect(mcpChange(team, ['github', 'notes'], 'github__get_*, notes__*')).toEqual({
      servers: ['github', 'notes'],
      tools: ['github__get_*', 'notes__*'],
    });
    // Only the globs changed; an emptied field is no tool (never every tool).
    expect(mcpChange(team, ['github'], 'github__*')).toEqual({ servers: ['github'], tools: ['github__*'] });
    expect(mcpChange(team, ['github'], '')).toEqual({ servers: ['github'], tools: [] });
  });

  it('no server ticked is no MCP access, whatever globs are typed', () => {
    expect(mcpChange(team, [], 'github__get_*')).toEqual({ servers: [], tools: ['*'] });
  });
});
