import type { AppLogger } from '../../src/common/logging/logger';
import type { Principal } from '../../src/auth/principal';
import type { McpSessionRecords } from '../../src/mcp/mcp-session-records.repository';
import { McpSessions, SESSION_TTL_SECONDS } from '../../src/mcp/mcp-sessions';

/** The repository in memory: its records, its writes, and whether it is up. */
class FakeRecords implements McpSessionRecords {
  up = true;
  failing = false;
  readonly records = new Map<string, string>();
  readonly writes: Array<{ digest: string; ttlSeconds: number }> = [];
  available = () => this.up;
  private check(): void {
    if (this.failing) throw new Error('Command timed out');
  }
  async save(digest: string, record: string, ttlSeconds: number) {
    this.check();
    this.records.set(digest, record);
    this.writes.push({ digest, ttlSeconds });
  }
  async refresh(digest: string, record: string, ttlSeconds: number) {
    this.check();
    if (!this.records.has(digest)) return;
    this.records.set(digest, record);
    this.writes.push({ digest, ttlSeconds });
  }
  async find(digest: string) {
    this.check();
    return this.records.get(digest) ?? null;
  }
  async remove(digest: string) {
    this.check();
    this.records.delete(digest);
  }
}

const ada = { tokenId: 'tok-ada', teamId: 'a' } as Principal;
const bob = { tokenId: 'tok-bob', teamId: 'b' } as Principal;

describe('MCP sessions (2025 revisions)', () => {
  let records: FakeRecords;
  let warnings: string[];
  let sessions: McpSessions;

  beforeEach(() => {
    records = new FakeRecords();
    warnings = [];
    const logger = { pino: { warn: (_fields: unknown, message: string) => warnings.push(message) } };
    sessions = new McpSessions(records, logger as unknown as AppLogger);
  });

  afterEach(() => jest.useRealTimers());

  it('opens a random visible-ASCII id, kept under its SHA-256 with the TTL, valid for its token and route only', async () => {
    const id = (await sessions.open(ada, '/mcp'))!;
    expect(id).toMatch(/^[\x21-\x7e]{43}$/);
    expect(await sessions.open(ada, '/mcp')).not.toBe(id);
    expect([...records.records.keys()].join()).not.toContain(id);
    expect(records.writes[0].ttlSeconds).toBe(SESSION_TTL_SECONDS);
    expect(await sessions.check(id, ada, '/mcp')).toBe('valid');
    expect(await sessions.check(id, bob, '/mcp')).toBe('unknown');
    expect(await sessions.check(id, ada, '/mcp/gh')).toBe('unknown');
    expect(await sessions.check('nope', ada, '/mcp')).toBe('unknown');
    expect(await sessions.end(id, bob, '/mcp')).toBe('unknown');
    expect(await sessions.end(id, ada, '/mcp')).toBe('valid');
    expect(await sessions.check(id, ada, '/mcp')).toBe('unknown');
  });

  it('renews the TTL at most every 10 minutes (no write per request)', async () => {
    jest.useFakeTimers({ now: 1_000_000_000_000 });
    const id = (await sessions.open(ada, '/mcp'))!;
    await sessions.check(id, ada, '/mcp');
    jest.setSystemTime(Date.now() + 9 * 60_000);
    await sessions.check(id, ada, '/mcp');
    expect(records.writes).toHaveLength(1);
    jest.setSystemTime(Date.now() + 60_000);
    await sessions.check(id, ada, '/mcp');
    expect(records.writes).toHaveLength(2);
    await sessions.check(id, ada, '/mcp');
    expect(records.writes).toHaveLength(2);
  });

  it('with the store down or failing: no session issued, none checked, none ended; the outage is logged', async () => {
    const id = (await sessions.open(ada, '/mcp'))!;
    records.up = false;
    expect(await sessions.open(ada, '/mcp')).toBeUndefined();
    expect(await sessions.check(id, bob, '/mcp')).toBe('unchecked');
    expect(await sessions.end(id, ada, '/mcp')).toBe('unchecked');
    records.up = true;
    records.failing = true;
    expect(await sessions.open(ada, '/mcp')).toBeUndefined();
    expect(await sessions.check(id, ada, '/mcp')).toBe('unchecked');
    expect(warnings[0]).toContain('MCP sessions are neither issued nor checked');
    records.failing = false;
    expect(await sessions.check(id, ada, '/mcp')).toBe('valid');
  });
});
