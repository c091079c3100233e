import { Inject, Injectable } from '@nestjs/common';
import type Redis from 'ioredis';
import { GatewayConfig } from '../config/config.schema';
import { LuaScript } from '../redis/lua-script';
import { REDIS } from '../redis/redis.module';
import { RedisKeys } from '../redis/redis-keys';
import type { RequestLogContent, RequestLogEntry, RequestLogRecord } from './request-log-entry';
import type { RequestLogPage, RequestLogQuery, RequestLogStore } from './request-log.repository';
import { decodeCursor, encodeCursor, isNewer, matches, type Position } from './request-log-query';

const DAY_MS = 86_400_000;
/** Entries read from Redis per round trip while a query scans. */
const SCAN_BATCH = 200;
/**
 * Entries a query reads at most before it answers (shared by the teams it reads, at least MIN_TEAM_BUDGET each): a
 * filter that matches little (a trace id, a rare status) answers with what it found so far and a `next` cursor to
 * go on from, rather than reading a month.
 */
const SCAN_BUDGET = 5_000;
const MIN_TEAM_BUDGET = 200;

/**
 * Keeps a batch of one team's entries of one day: each new id in the day's hash and in its time order (an id
 * already kept is left as it is, so a retried batch changes nothing), its content in the content hash; then
 * trims the day to its cap, oldest first, and sets the keys' expiry (metadata and content by their own retention).
 *
 * KEYS: [1] the day's entries, [2] its time order, [3] its content.
 * ARGV: [1] entries' ttl (s), [2] content's ttl (s), [3] the cap per team per day, [4] n, then n times: id,
 * start time (ms), entry JSON, content JSON or ''.
 * Returns {added, evicted}.
 */
const APPEND_ENTRIES = new LuaScript<[number, number]>(
  'appendRequestLog',
  `
local n = tonumber(ARGV[4])
local added = 0
for i = 0, n - 1 do
  local at = 5 + i * 4
  local id = ARGV[at]
  if redis.call('HSETNX', KEYS[1], id, ARGV[at + 2]) == 1 then
    redis.call('ZADD', KEYS[2], ARGV[at + 1], id)
    if ARGV[at + 3] ~= '' then redis.call('HSET', KEYS[3], id, ARGV[at + 3]) end
    added = added + 1
  end
end
local over = redis.call('ZCARD', KEYS[2]) - tonumber(ARGV[3])
if over > 0 then
  local oldest = redis.call('ZRANGE', KEYS[2], 0, over - 1)
  redis.call('ZREMRANGEBYRANK', KEYS[2], 0, over - 1)
  for _, id in ipairs(oldest) do
    redis.call('HDEL', KEYS[1], id)
    redis.call('HDEL', KEYS[3], id)
  end
else
  over = 0
end
redis.call('EXPIRE', KEYS[1], ARGV[1])
redis.call('EXPIRE', KEYS[2], ARGV[1])
if redis.call('EXISTS', KEYS[3]) == 1 then redis.call('EXPIRE', KEYS[3], ARGV[2]) end
return {added, over}
`,
);

/**
 * The request log in Redis, the embedded default: per team and UTC day, an entries hash and its time order
 * (a sorted set), content in a hash of its own; each day's keys expire as a whole when its retention is over
 * (metadata and content apart), and a day keeps at most `maxEntriesPerTeamPerDay` entries (the oldest go first,
 * counted as evicted). A query reads a team's days newest first; across teams, each team's newest and merges them.
 */
@Injectable()
export class RedisRequestLogStore implements RequestLogStore {
  private readonly keys: RedisKeys;

  constructor(
    @Inject(REDIS) private readonly redis: Redis,
    private readonly config: GatewayConfig,
  ) {
    this.keys = new RedisKeys(config.redis.keyPrefix);
    APPEND_ENTRIES.defineOn(redis);
  }

  async append(records: readonly RequestLogRecord[]): Promise<{ evicted: number }> {
    const groups = new Map<string, RequestLogRecord[]>();
    for (const record of records) {
      const group = `${dayOf(Date.parse(record.entry.at))} ${record.entry.team}`;
      const list = groups.get(group);
      if (list) list.push(record);
      else groups.set(group, [record]);
    }
    const { retentionDays, redis: limits } = this.config.logging.requests;
    const now = Date.now();
    const results = await Promise.all(
      [...groups].map(async ([group, list]) => {
        const [day, team] = group.split(' ');
        const args: Array<string | number> = [
          ttlSeconds(day, retentionDays.metadata, now),
          ttlSeconds(day, retentionDays.content, now),
          limits.maxEntriesPerTeamPerDay,
          list.length,
        ];
        for (const { entry, content } of list)
          args.push(
            entry.id,
            Date.parse(entry.at),
            JSON.stringify(entry),
            content ? JSON.stringify(content) : '',
          );
        const [, evicted] = await APPEND_ENTRIES.run(
          this.redis,
          [
            this.keys.requestLogEntries(team, day),
            this.keys.requestLogOrder(team, day),
            this.keys.requestLogContent(team, day),
          ],
          args,
        );
        // One command per batch and day, not one per entry: the index is what finds an entry by its id alone.
        const index = this.keys.requestLogDayIndex(day);
        await Promise.all([
          this.redis.sadd(this.keys.requestLogTeams(), team),
          this.redis.hset(index, Object.fromEntries(list.map(({ entry }) => [entry.id, team]))),
          this.redis.expire(index, ttlSeconds(day, retentionDays.metadata, now)),
        ]);
        return evicted;
      }),
    );
    return { evicted: results.reduce((sum, evicted) => sum + evicted, 0) };
  }

  async query(query: RequestLogQuery): Promise<RequestLogPage> {
    const teams =
      query.team !== undefined
        ? [query.team]
        : (query.teams ?? (await this.redis.smembers(this.keys.requestLogTeams())));
    const after = query.after !== undefined ? decodeCursor(query.after) : undefined;
    const budget = Math.max(MIN_TEAM_BUDGET, Math.floor(SCAN_BUDGET / Math.max(1, teams.length)));
    const scans = await Promise.all(teams.map((team) => this.scanTeam(team, query, after, budget)));
    // A team whose scan stopped on its budget has not been read past where it stopped (the entry it read last): the
    // page ends there, and the next goes on from there.
    let cut: Position | undefined;
    for (const scan of scans)
      if (scan.stoppedAt && (!cut || isNewer(scan.stoppedAt, cut))) cut = scan.stoppedAt;
    const merged = scans
      .flatMap((scan) => scan.found)
      .filter((entry) => !cut || !isNewer(cut, positionOf(entry)))
      .sort((a, b) => (isNewer(positionOf(a), positionOf(b)) ? -1 : 1));
    const entries = merged.slice(0, query.limit);
    const last = entries.at(-1);
    // More to read: past a full page (a team had more than it), or past where a team's scan stopped.
    const next =
      last && entries.length === query.limit && (merged.length > query.limit || cut) ? positionOf(last) : cut;
    return { entries, next: next ? encodeCursor(next) : null };
  }

  async get(id: string): Promise<{ entry: RequestLogEntry; content: RequestLogContent | null } | null> {
    // The entry's day is not in its id: look in each day's index, newest first, as far back as entries are kept.
    const today = startOfDay(Date.now());
    const days = Array.from({ length: this.config.logging.requests.retentionDays.metadata + 2 }, (_, i) =>
      dayOf(today + DAY_MS - i * DAY_MS),
    );
    const teams = await Promise.all(
      days.map((day) => this.redis.hget(this.keys.requestLogDayIndex(day), id)),
    );
    const at = teams.findIndex((team) => team !== null);
    if (at === -1) return null;
    const [day, team] = [days[at], teams[at]!];
    const [entry, content] = await Promise.all([
      this.redis.hget(this.keys.requestLogEntries(team, day), id),
      this.redis.hget(this.keys.requestLogContent(team, day), id),
    ]);
    if (!entry) return null;
    return {
      entry: JSON.parse(entry) as RequestLogEntry,
      content: content ? (JSON.parse(content) as RequestLogContent) : null,
    };
  }

  /** Nothing to do: each day's keys expire by themselves. */
  async expire(): Promise<void> {}

  /** The connection is the gateway's shared one (redis.module closes it). */
  async close(): Promise<void> {}

  /**
   * One team's entries that match, newest first, older than `after`: up to `limit` of them, reading at most
   * `budget` entries (one more than `limit` when there are more); `stoppedAt`: the budget ran out there.
   */
  private async scanTeam(
    team: string,
    query: RequestLogQuery,
    after: Position | undefined,
    budget: number,
  ): Promise<{ found: RequestLogEntry[]; stoppedAt?: Position }> {
    // (stoppedAt is only set once `read` reached a budget of at least 1, so an entry was read before it.)
    const now = Date.now();
    const oldest = Math.max(
      query.from !== undefined ? Date.parse(query.from) : -Infinity,
      startOfDay(now) - this.config.logging.requests.retentionDays.metadata * DAY_MS,
    );
    let newest = query.to !== undefined ? Date.parse(query.to) - 1 : now + DAY_MS;
    if (after) newest = Math.min(newest, after.at);
    const found: RequestLogEntry[] = [];
    let read = 0;
    let lastRead: Position | undefined;
    for (let day = startOfDay(newest); day >= startOfDay(oldest); day -= DAY_MS) {
      const name = dayOf(day);
      for (let offset = 0; ; offset += SCAN_BATCH) {
        const ids = await this.redis.zrevrangebyscore(
          this.keys.requestLogOrder(team, name),
          newest,
          oldest,
          'WITHSCORES',
          'LIMIT',
          offset,
          SCAN_BATCH,
        );
        if (ids.length === 0) break;
        const positions: Position[] = [];
        for (let i = 0; i < ids.length; i += 2) positions.push({ at: Number(ids[i + 1]), id: ids[i] });
        const unread = after ? positions.filter((position) => isNewer(after, position)) : positions;
        const bodies = unread.length
          ? await this.redis.hmget(this.keys.requestLogEntries(team, name), ...unread.map((p) => p.id))
          : [];
        for (let i = 0; i < unread.length; i++) {
          // Everything down to the entry read last (itself included) has been read.
          if (read >= budget) return { found, stoppedAt: unread[i - 1] ?? lastRead };
          read++;
          const body = bodies[i];
          if (!body) continue; // trimmed between the two reads
          const entry = JSON.parse(body) as RequestLogEntry;
          if (!matches(entry, query)) continue;
          found.push(entry);
          if (found.length > query.limit) return { found };
        }
        lastRead = unread.at(-1) ?? lastRead;
        if (ids.length < SCAN_BATCH * 2) break;
      }
    }
    return { found };
  }
}

function positionOf(entry: RequestLogEntry): Position {
  return { at: Date.parse(entry.at), id: entry.id };
}

function startOfDay(ms: number): number {
  return Math.floor(ms / DAY_MS) * DAY_MS;
}

function dayOf(ms: number): string {
  return new Date(startOfDay(ms)).toISOString().slice(0, 10);
}

/** Seconds until the end of the day's retention (the day itself, then `days` more days); at least 1. */
function ttlSeconds(day: string, days: number, now: number): number {
  const end = Date.parse(`${day}T00:00:00Z`) + (days + 1) * DAY_MS;
  return Math.max(1, Math.ceil((end - now) / 1000));
}
