import { firstInOrder } from '../../src/mcp/mcp-gateway-server';
import { templateMatches } from '../../src/mcp/uri-template';

describe('an MCP resource URI against a server URI template', () => {
  it('matches the literal parts in order, anything where an expression stands', () => {
    expect(templateMatches('memo://notes/{name}', 'memo://notes/monday')).toBe(true);
    expect(templateMatches('file:///{+path}', 'file:///a/b/c.txt')).toBe(true);
    expect(templateMatches('repo://{owner}/{repo}/issues{?state}', 'repo://o/r/issues?state=open')).toBe(
      true,
    );
    expect(templateMatches('repo://{owner}/{repo}/issues{?state}', 'repo://o/r/pulls')).toBe(false);
  });

  it('anchors the first literal at the start and the last at the end', () => {
    expect(templateMatches('memo://notes/{name}', 'x-memo://notes/monday')).toBe(false);
    expect(templateMatches('memo://{name}.txt', 'memo://a.txt.bak')).toBe(false);
    expect(templateMatches('memo://{name}.txt', 'memo://.txt')).toBe(true);
    // The first and last literal may not overlap: "ab" is not "ab" + anything + "b".
    expect(templateMatches('ab{x}b', 'ab')).toBe(false);
  });

  it('a template without expressions is the one URI', () => {
    expect(templateMatches('memo://readme', 'memo://readme')).toBe(true);
    expect(templateMatches('memo://readme', 'memo://readme2')).toBe(false);
  });

  it('scans a long URI in linear time (no backtracking over many expressions)', () => {
    const template = `x://${'{a}-'.repeat(20)}{z}!`;
    const uri = `x://${'-'.repeat(200_000)}`; // no "!" at the end: a backtracking regex would try every split
    const started = process.hrtime.bigint();
    expect(templateMatches(template, uri)).toBe(false);
    expect(Number(process.hrtime.bigint() - started) / 1e6).toBeLessThan(1000);
  });
});

describe("a resource's server on /mcp", () => {
  const never = new Promise<string[]>(() => undefined);
  const lists: Record<string, () => Promise<string[]>> = {
    fast: async () => ['memo://readme'],
    hung: () => never,
    failing: async () => Promise.reject(new Error('down')),
    other: async () => ['memo://other'],
  };
  const owner = (servers: string[], uri: string) =>
    firstInOrder(
      servers,
      (id) => lists[id](),
      (item) => item === uri,
    );

  it('is the first in configured order that lists it, without waiting for a slow server after it', async () => {
    expect(await owner(['fast', 'hung'], 'memo://readme')).toBe('fast');
  });

  it('skips a server that fails, and is none when no server lists it', async () => {
    expect(await owner(['failing', 'other', 'fast'], 'memo://readme')).toBe('fast');
    expect(await owner(['failing', 'other'], 'memo://readme')).toBeUndefined();
  });
});
