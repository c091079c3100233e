import type { AppLogger } from '../../src/common/logging/logger';
import type { Principal } from '../../src/auth/principal';
import type { McpSessionRecords } from '../../src/mcp/mcp-session-records.repository';
import { MAX_SESSIONS_PER_TOKEN, McpSessions, SESSION_TTL_SECONDS } from '../../src/mcp/mcp-sessions';

/**
 * The repository in memory, with the Redis one's rules: per token, live while saved or refreshed within the TTL,
 * at most `maxPerToken` (saving one more drops the one refreshed longest ago). Records its writes and whether it is up.
 */
class FakeRecords implements McpSessionRecords {
  up = true;
  failing = false;
  /** token -> digest -> the record and when it was last written (ms). */
  readonly tokens = new Map<string, Map<string, { record: string; at: number }>>();
  readonly writes: Array<{ digest: string; ttlSeconds: number }> = [];
  available = () => this.up;
  private check(): void {
    if (this.failing) throw new Error('Command timed out');
  }
  private of(tokenId: string) {
    const sessions = this.tokens.get(tokenId) ?? new Map<string, { record: string; at: number }>();
    this.tokens.set(tokenId, sessions);
    return sessions;
  }
  private live(tokenId: string, digest: string, at: { nowMs: number; ttlSeconds: number }) {
    const entry = this.of(tokenId).get(digest);
    return entry && entry.at > at.nowMs - at.ttlSeconds * 1000 ? entry : undefined;
  }
  async save(
    tokenId: string,
    digest: string,
    record: string,
    at: { nowMs: number; ttlSeconds: number; maxPerToken: number },
  ) {
    this.check();
    const sessions = this.of(tokenId);
    sessions.set(digest, { record, at: at.nowMs });
    for (const [d] of sessions) if (!this.live(tokenId, d, at)) sessions.delete(d);
    const oldestFirst = [...sessions].sort((a, b) => a[1].at - b[1].at);
    for (const [d] of oldestFirst.slice(0, Math.max(0, sessions.size - at.maxPerToken))) sessions.delete(d);
    this.writes.push({ digest, ttlSeconds: at.ttlSeconds });
  }
  async refresh(tokenId: string, digest: string, record: string, at: { nowMs: number; ttlSeconds: number }) {
    this.check();
    if (!this.live(tokenId, digest, at)) return;
    this.of(tokenId).set(digest, { record, at: at.nowMs });
    this.writes.push({ digest, ttlSeconds: at.ttlSeconds });
  }
  async find(tokenId: string, digest: string, at: { nowMs: number; ttlSeconds: number }) {
    this.check();
    return this.live(tokenId, digest, at)?.record ?? null;
  }
  async remove(tokenId: string, digest: string) {
    this.check();
    this.of(tokenId).delete(digest);
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
    expect(JSON.stringify([...records.tokens.get('tok-ada')!.keys()])).not.toContain(id);
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

  it("keeps at most MAX_SESSIONS_PER_TOKEN per token: one more ends the one used longest ago, not other tokens'", async () => {
    jest.useFakeTimers({ now: 1_000_000_000_000 });
    const bobs = (await sessions.open(bob, '/mcp'))!;
    const ids: string[] = [];
    for (let i = 0; i < MAX_SESSIONS_PER_TOKEN; i++) {
      ids.push((await sessions.open(ada, '/mcp'))!);
      jest.setSystemTime(Date.now() + 1000);
    }
    // The first is used after its 10 minutes (renewed), so the second is now the one used longest ago.
    jest.setSystemTime(Date.now() + 10 * 60_000);
    expect(await sessions.check(ids[0], ada, '/mcp')).toBe('valid');
    const newest = (await sessions.open(ada, '/mcp'))!;
    expect(records.tokens.get('tok-ada')!.size).toBe(MAX_SESSIONS_PER_TOKEN);
    expect(await sessions.check(ids[1], ada, '/mcp')).toBe('unknown');
    expect(await sessions.check(ids[0], ada, '/mcp')).toBe('valid');
    expect(await sessions.check(ids[2], ada, '/mcp')).toBe('valid');
    expect(await sessions.check(newest, ada, '/mcp')).toBe('valid');
    expect(await sessions.check(bobs, bob, '/mcp')).toBe('valid');
  });

  it('ends a session a TTL after its last renewal', async () => {
    jest.useFakeTimers({ now: 1_000_000_000_000 });
    const id = (await sessions.open(ada, '/mcp'))!;
    jest.setSystemTime(Date.now() + SESSION_TTL_SECONDS * 1000 - 1);
    expect(await sessions.check(id, ada, '/mcp')).toBe('valid');
    jest.setSystemTime(Date.now() + SESSION_TTL_SECONDS * 1000);
    expect(await sessions.check(id, ada, '/mcp')).toBe('unknown');
  });
});
