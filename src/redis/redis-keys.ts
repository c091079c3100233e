/**
 * Every Redis key name in one place. The prefix isolates deployments (and test runs)
 * sharing one Redis. The `{...}` hash tag puts all of a team's keys (its record, token
 * set, usage and limit counters) in one Redis Cluster slot, so the Lua scripts that
 * touch several of them stay legal on a cluster.
 */
export class RedisKeys {
  constructor(readonly prefix: string) {}
  team(teamId: string): string {
    return `${this.prefix}team:{${teamId}}`;
  }
  teamTokens(teamId: string): string {
    return `${this.prefix}team:{${teamId}}:tokens`;
  }
  teamIndex(): string {
    return `${this.prefix}teams`;
  }
  token(tokenId: string): string {
    return `${this.prefix}token:{${tokenId}}`;
  }
  /** The team's usage records (a Redis Stream). */
  usageRecords(teamId: string): string {
    return `${this.prefix}usage:{${teamId}}:records`;
  }
  /** The team's counters for one UTC day (yyyy-mm-dd). */
  usageDay(teamId: string, day: string): string {
    return `${this.prefix}usage:{${teamId}}:d:${day}`;
  }
  /** Marks a usage record as written, so a retried write is not counted twice. */
  usageSeen(teamId: string, recordId: string): string {
    return `${this.prefix}usage:{${teamId}}:seen:${recordId}`;
  }
  /** A limit counter: scope is `team` or `tok:<tokenId>`, window e.g. `m:29412345`. */
  limitCounter(teamId: string, scope: string, limit: string, window: string): string {
    return `${this.prefix}rl:{${teamId}}:${scope}:${limit}:${window}`;
  }
  /** Leases on a team's (scope `team`) or token's (`tok:<id>`) requests in flight: ZSET record id -> lease end (ms). */
  concurrency(teamId: string, scope: string): string {
    return `${this.prefix}conc:{${teamId}}:${scope}`;
  }
  /** The team's requests in flight: HASH usage-record id -> what to record if the replica serving it dies. */
  inflight(teamId: string): string {
    return `${this.prefix}inflight:{${teamId}}`;
  }
  /** Every replica that has served requests: SET of replica ids, global, read by the survivors' sweeps. */
  replicas(): string {
    return `${this.prefix}replicas`;
  }
  /** The teams a replica has had requests in flight for: SET of team ids (where a sweep finds its leases). */
  replicaTeams(replicaId: string): string {
    return `${this.prefix}replica-teams:${replicaId}`;
  }
  /** A replica's heartbeat: present while it is alive (renewed every third of `usage.leaseSeconds`). */
  replicaAlive(replicaId: string): string {
    return `${this.prefix}replica:${replicaId}`;
  }
  /** A stored Responses API response (its answer, its input items and the conversation so far), under its team's tag. */
  storedResponse(teamId: string, responseId: string): string {
    return `${this.prefix}resp:{${teamId}}:${responseId}`;
  }
  /** A cached answer (response-cache/): by the SHA-256 of the team's request, under its team's tag. */
  responseCache(teamId: string, key: string): string {
    return `${this.prefix}rcache:{${teamId}}:${key}`;
  }
  /** A console sign-in, by the SHA-256 of its cookie value (the cookie itself is never stored). */
  consoleSession(sessionDigest: string): string {
    return `${this.prefix}console:session:${sessionDigest}`;
  }
  /** A token's MCP sessions of the 2025 revisions (mcp/mcp-sessions.ts): HASH SHA-256 of `Mcp-Session-Id` -> record. */
  mcpSessions(tokenId: string): string {
    return `${this.prefix}mcp:sessions:{${tokenId}}`;
  }
  /** When each of those sessions was last saved or refreshed: ZSET digest -> ms (expiry and the per-token cap). */
  mcpSessionTimes(tokenId: string): string {
    return `${this.prefix}mcp:session-times:{${tokenId}}`;
  }
  /** A team's granted memberships: HASH subject -> {role, grantedAt, grantedBy} (access/). */
  teamMembers(teamId: string): string {
    return `${this.prefix}team:{${teamId}}:members`;
  }
  /** The same memberships by person: HASH team -> {role, grantedAt, grantedBy}, read by the auth guard. */
  personTeams(subject: string): string {
    return `${this.prefix}person:{${subject}}:teams`;
  }
  /** A personal admin token's record (auth/personal-tokens.ts), by its public id. */
  personalToken(tokenId: string): string {
    return `${this.prefix}admin-token:{${tokenId}}`;
  }
  /** A person's personal admin tokens: SET of token ids. */
  personTokens(subject: string): string {
    return `${this.prefix}person:{${subject}}:admin-tokens`;
  }
  /** A person's last sign-in through the identity provider (the person, their roles then), read by their tokens. */
  personSignIn(subject: string): string {
    return `${this.prefix}person:{${subject}}:sign-in`;
  }
  /** A console sign-in through the identity provider under way (its PKCE verifier, state, nonce), by its cookie's SHA-256. */
  ssoFlow(flowDigest: string): string {
    return `${this.prefix}console:sso-flow:${flowDigest}`;
  }
  /** An ID token the CLI exchanged for a personal token, by its SHA-256: kept until it expires, so it is used once. */
  cliIdTokenUsed(idTokenDigest: string): string {
    return `${this.prefix}console:cli-id-token:${idTokenDigest}`;
  }
  /** Wrong admin keys from one client address (an IPv6 /64) in its current window: admin API and console sign-in. */
  adminKeyFailures(address: string): string {
    return `${this.prefix}auth:admin-key-failures:${address}`;
  }
  /** A team's request log entries of one UTC day (yyyy-mm-dd): HASH entry id -> entry JSON. */
  requestLogEntries(teamId: string, day: string): string {
    return `${this.prefix}reqlog:{${teamId}}:${day}:entries`;
  }
  /** The same day's entries in time order: ZSET entry id by its start time (ms). */
  requestLogOrder(teamId: string, day: string): string {
    return `${this.prefix}reqlog:{${teamId}}:${day}:order`;
  }
  /** The same day's kept content, apart (a retention of its own): HASH entry id -> content JSON. */
  requestLogContent(teamId: string, day: string): string {
    return `${this.prefix}reqlog:{${teamId}}:${day}:content`;
  }
  /** Which team each entry of a day belongs to, by id (GET /admin/v1/requests/{id}): HASH entry id -> team. */
  requestLogDayIndex(day: string): string {
    return `${this.prefix}reqlog:ids:${day}`;
  }
  /** The teams that have request log entries: SET (where a query of every team looks). */
  requestLogTeams(): string {
    return `${this.prefix}reqlog:teams`;
  }
  audit(): string {
    return `${this.prefix}audit`;
  }
  invalidationChannel(): string {
    return `${this.prefix}auth:invalidate`;
  }
}
