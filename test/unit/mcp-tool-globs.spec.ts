import { toolGlobsMatchingNothing, toolGlobSyntaxProblem } from '../../src/mcp/tool-globs';

describe('MCP tool globs', () => {
  it('a glob is 1-162 characters with no whitespace, comma or control character', () => {
    for (const glob of ['*', 'github__*', 'github__get.issue', 'db__run__query', 'a'.repeat(162)])
      expect(toolGlobSyntaxProblem(glob)).toBeUndefined();
    expect(toolGlobSyntaxProblem('')).toBe('is empty');
    expect(toolGlobSyntaxProblem('a'.repeat(163))).toBe('is longer than 162 characters');
    for (const glob of ['github__*, notes__*', 'github__* notes__*', ' github__*', 'x__a\tb', 'x__\u0000'])
      expect(toolGlobSyntaxProblem(glob)).toBe('has whitespace, a comma or a control character');
  });

  it("names the globs that can match no tool of the team's servers, and why", () => {
    const servers = ['github', 'notes'];
    expect(
      toolGlobsMatchingNothing(servers, ['*', 'github__*', 'notes__read_*', '*__get_*', 'git*', 'db__x']),
    ).toEqual([{ glob: 'db__x', why: `"db" is not one of the team's MCP servers` }]);
    expect(toolGlobsMatchingNothing(servers, ['echo'])).toEqual([
      { glob: 'echo', why: 'tools are named <server>__<tool>, so it names none' },
    ]);
    // A team given no server: a glob naming one matches nothing; `*` (the default) is fine.
    expect(toolGlobsMatchingNothing([], ['*'])).toEqual([]);
    expect(toolGlobsMatchingNothing([], ['github__*']).map((p) => p.glob)).toEqual(['github__*']);
  });
});
