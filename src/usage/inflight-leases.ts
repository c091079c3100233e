import { randomUUID } from 'node:crypto';
import { Inject, Injectable, type OnApplicationShutdown, type OnModuleInit } from '@nestjs/common';
import { GatewayConfig } from '../config/config.schema';
import { AppLogger } from '../common/logging/logger';
import { MetricsService } from '../metrics/metrics.service';
import type { CounterId } from '../limits/limit-counters.repository';
import { withCost, type UsageRecord } from './usage-record';
import { PriceBook } from '../billing/price-book';
import { UsageWriter } from './usage-writer';
import { USAGE_RECORDS, type UsageRecords } from './usage-records.repository';
import { batch } from '../redis/batch';
import { INFLIGHT_LEASE_STORE, type InflightLeaseStore } from './inflight-leases.repository';

/**
 * What a survivor records for a request whose replica died: the request as admitted (the fields of its usage
 * record it already knows), and what it reserved, billed if the replica dies (prompt estimate + completion
 * allowance when there is a reservation).
 */
export type LeasedRequest = Pick<
  UsageRecord,
  | 'requestId'
  | 'team'
  | 'tokenId'
  | 'model'
  | 'backend'
  | 'upstreamModel'
  | 'stream'
  | 'promptTokens'
  | 'completionTokens'
  | 'endpoint'
> & {
  recordId: string;
  admittedAt: number;
  /** Concurrency lease sets holding this request (released when it is accounted). */
  concurrencyKeys: CounterId[];
  /** The replica serving it: its request is lost when that replica's heartbeat is gone. */
  replica?: string;
};

/** Most lost requests one sweep settles (the rest wait for the next sweep). */
const SWEEP_BATCH = 100;
/**
 * How many leases a survivor's estimate waits for the request's own record before the survivor counts it in its
 * metrics. A record that comes later still replaces it in Redis (usage API, budgets), but the metrics keep the
 * estimate: their counters cannot go down.
 */
const ESTIMATE_WAIT_LEASES = 10;
/** An estimate whose marker is still missing this long after it was due is given up on (never written, or expired). */
const ESTIMATE_GIVE_UP_MS = 86_400_000;

/** An estimate this replica wrote, not yet counted in its metrics. */
interface PendingEstimate {
  record: UsageRecord;
  dueAt: number;
}

/**
 * Every admitted request is written to Redis when it is admitted: one hash entry on its team's slot, naming the
 * replica serving it. Each replica keeps a heartbeat key alive (renewed every third of `usage.leaseSeconds`,
 * expiring after it), is listed in a global set of replicas, and lists the teams it has leased for. Accounting a request
 * removes its entry (usage-writer.ts). If its replica dies (SIGKILL, OOM, a lost node), its heartbeat expires,
 * and whichever replica sweeps first writes the usage record of each of its requests: what it reserved, marked
 * estimated, `error_code: replica_lost`. The record has the id the request's own record would have had, so if the
 * replica was only paused or cut off from Redis and its request ends after all, the one Lua script that writes
 * records replaces the estimate with the real record (counters, stream entry, limits settled): one record per
 * request, always, with the true counts when they come.
 *
 * Metrics cannot be corrected that way (a Prometheus counter never goes down), so neither side counts a record
 * that may be replaced before it knows: the survivor counts its estimate only after ESTIMATE_WAIT_LEASES, and only
 * if the real record has not replaced it (MARK_ESTIMATE_COUNTED); a replica whose heartbeat may have lapsed while
 * a request was open (mayHaveBeenSwept) counts that request's record once the script says it was not a duplicate,
 * and not at all if the estimate was counted first.
 *
 * Liveness is per replica, not per request, so a request costs one write on its team's slot when it is admitted
 * and nothing on a global key: an earlier design scored every request in one global ZSET (a write to one Cluster
 * node for every request on every node, ~30 us of CPU per request for the command and its reply).
 */
@Injectable()
export class InflightLeases implements OnModuleInit, OnApplicationShutdown {
  private readonly open = new Map<string, LeasedRequest>();
  /** Teams this replica has listed as leased for (each added once, and again on every renewal that serves it). */
  private readonly indexedTeams = new Set<string>();
  private readonly replicaId = randomUUID();
  /** Lost requests this replica has settled lately (id -> when): their entry stays until the writer's script runs. */
  private readonly settledLately = new Map<string, number>();
  /**
   * Replicas whose heartbeat this replica found missing, and since when. A replica is taken for dead only when its
   * heartbeat stays missing for half a lease: a live one rewrites it every third of a lease, so a heartbeat lost
   * in a Redis failover (written to the old master, never replicated) does not make its requests look lost.
   */
  private readonly missingSince = new Map<string, number>();
  /** Estimates this replica wrote, by record id, until counted in its metrics or replaced. */
  private readonly pendingEstimates = new Map<string, PendingEstimate>();
  /** When the last heartbeat that Redis took was sent: the heartbeat key lives at least a lease from then. */
  private lastHeartbeatAt = 0;
  /** When a heartbeat was last sent more than a lease after the previous one that Redis took (a lapse ended). */
  private lastLapseAt?: number;
  private renewTimer?: NodeJS.Timeout;
  private sweepTimer?: NodeJS.Timeout;
  private readonly leaseMs: number;

  constructor(
    @Inject(INFLIGHT_LEASE_STORE) private readonly store: InflightLeaseStore,
    private readonly writer: UsageWriter,
    @Inject(USAGE_RECORDS) private readonly usage: UsageRecords,
    private readonly metrics: MetricsService,
    private readonly logger: AppLogger,
    config: GatewayConfig,
    private readonly prices: PriceBook,
  ) {
    this.leaseMs = config.usage.leaseSeconds * 1000;
  }

  get leaseLength(): number {
    return this.leaseMs;
  }

  async onModuleInit(): Promise<void> {
    const every = Math.max(100, Math.floor(this.leaseMs / 3));
    this.renewTimer = setInterval(() => void this.renew(), every);
    this.renewTimer.unref();
    // Sweeps are spread out a little so replicas do not all sweep in the same instant.
    this.sweepTimer = setInterval(() => void this.sweep(), every + Math.floor(Math.random() * every));
    this.sweepTimer.unref();
    // Alive before the first request is admitted, so no sweep can take this replica's requests for lost.
    await this.heartbeat().catch(() => undefined);
  }

  async onApplicationShutdown(): Promise<void> {
    clearInterval(this.renewTimer);
    clearInterval(this.sweepTimer);
  }

  /**
   * The team's in-flight hash, where the admission script writes the lease (`serialize`d). The team is listed
   * among this replica's teams first (once per team), so no lease is ever written where a sweep would not look.
   */
  keyFor(team: string): string {
    this.indexTeam(team);
    return this.store.leasesOf(team);
  }

  private indexTeam(team: string): void {
    if (this.indexedTeams.has(team) || !this.store.ready) return;
    this.indexedTeams.add(team);
    this.store.listTeams(this.replicaId, [team]).catch(() => this.indexedTeams.delete(team));
  }

  /** The lease as stored in Redis, naming this replica. */
  serialize(request: LeasedRequest): string {
    request.replica = this.replicaId;
    return JSON.stringify(request);
  }

  /**
   * Tracks the request until it is accounted (renewals rewrite it; a survivor settles it if this replica dies).
   * Unless the admission script `written` it already, it is written now (not awaited: it rides the next
   * pipelined write, off the request's path).
   */
  begin(request: LeasedRequest, { written }: { written: boolean }): void {
    request.replica = this.replicaId;
    this.open.set(request.recordId, request);
    if (written || !this.store.ready) return; // renewal writes it once Redis is back
    this.indexTeam(request.team);
    this.store.writeLease(request.team, request.recordId, JSON.stringify(request)).catch(() => undefined);
  }

  /** The request was accounted (its record is queued; the writer removes its entry in Redis). */
  end(recordId: string): LeasedRequest | undefined {
    const request = this.open.get(recordId);
    this.open.delete(recordId);
    return request;
  }

  /**
   * True when this replica's heartbeat may have expired at some moment since `admittedAt`, so a survivor may have
   * recorded the request admitted then as lost: its record may replace an estimate (see the class comment).
   */
  mayHaveBeenSwept(admittedAt: number): boolean {
    return (
      Date.now() - this.lastHeartbeatAt > this.leaseMs ||
      (this.lastLapseAt !== undefined && this.lastLapseAt >= admittedAt)
    );
  }

  /** Alive for one more lease, and listed among the replicas (again: the set may have been lost with a node). */
  private async heartbeat(): Promise<void> {
    const sentAt = Date.now();
    if (this.lastHeartbeatAt > 0 && sentAt - this.lastHeartbeatAt > this.leaseMs) this.lastLapseAt = sentAt;
    if (await this.store.heartbeat(this.replicaId, this.leaseMs)) this.lastHeartbeatAt = sentAt;
  }

  /** Keeps this replica alive and rewrites what it serves (sent together). */
  private async renew(): Promise<void> {
    if (!this.store.ready) return;
    const until = Date.now() + this.leaseMs;
    // Written in full (not only renewed): after an outage its first write may never have happened.
    const leases = [...this.open.values()].map((request) => ({
      team: request.team,
      recordId: request.recordId,
      lease: JSON.stringify(request),
      leaseSets: request.concurrencyKeys,
    }));
    await Promise.all([this.heartbeat(), this.store.renew(this.replicaId, leases, until)]);
  }

  /**
   * Settles the requests of replicas whose heartbeat is gone. Costs one EXISTS per known replica; only a lost
   * replica's teams are read. A lost replica with nothing left to settle is forgotten.
   */
  async sweep(): Promise<number> {
    if (!this.store.ready) return 0;
    let settled = 0;
    try {
      const now = Date.now();
      const replicas = (await this.store.replicas()).filter((replica) => replica !== this.replicaId);
      const alive = await this.store.alive(replicas);
      const known = new Set(replicas);
      for (const replica of this.missingSince.keys())
        if (!known.has(replica)) this.missingSince.delete(replica);
      const lost: string[] = [];
      replicas.forEach((replica, i) => {
        const exists = alive[i];
        if (exists instanceof Error) return;
        if (exists) return void this.missingSince.delete(replica);
        const since = this.missingSince.get(replica);
        if (since === undefined) this.missingSince.set(replica, now);
        else if (now - since >= this.leaseMs / 2) lost.push(replica);
      });
      for (const [id, at] of this.settledLately)
        if (now - at > 10 * this.leaseMs) this.settledLately.delete(id);
      await this.countDueEstimates(now);
      for (const replica of lost) {
        if (settled >= SWEEP_BATCH) break;
        let left = 0;
        for (const leases of await this.store.leasesListedBy(replica)) {
          if (leases instanceof Error) {
            left++; // unread: keep the replica for the next sweep
            continue;
          }
          for (const payload of leases) {
            const request = JSON.parse(payload) as LeasedRequest;
            if (request.replica !== replica) continue;
            left++;
            if (settled >= SWEEP_BATCH || this.settledLately.has(request.recordId)) continue;
            this.settledLately.set(request.recordId, now);
            this.settleLost(request);
            settled++;
          }
        }
        // Every request it had is accounted (their entries are gone): nothing more to look for.
        if (left === 0) await this.store.forget(replica);
      }
    } catch (error) {
      this.logger.pino.warn({ err: error }, 'in-flight sweep failed; will retry');
    }
    return settled;
  }

  private settleLost(request: LeasedRequest): void {
    const now = Date.now();
    const record: UsageRecord = withCost(
      {
        id: request.recordId,
        at: new Date(now).toISOString(),
        requestId: request.requestId,
        team: request.team,
        tokenId: request.tokenId,
        model: request.model,
        modelLabel: request.model, // an admitted request was routed: its model is configured
        backend: request.backend,
        upstreamModel: request.upstreamModel,
        servedModel: request.model,
        attempts: 1,
        endpoint: request.endpoint,
        stream: request.stream,
        promptTokens: request.promptTokens,
        completionTokens: request.completionTokens,
        reasoningTokens: 0,
        status: 502,
        outcome: 'error',
        errorCode: 'replica_lost',
        latencyMs: now - request.admittedAt,
        estimated: true,
        cachedTokens: 0,
        cacheWriteTokens: 0,
        cacheWrite1hTokens: 0,
        cacheHit: false,
      },
      this.prices.priceOf({
        model: request.model,
        backend: request.backend,
        upstreamModel: request.upstreamModel,
      }),
    );
    this.logger.pino.warn(
      { team: record.team, requestId: record.requestId, recordId: record.id },
      'settling a request whose replica stopped renewing its lease',
    );
    // No settlement delta: what it reserved stays charged against the limits, as the record says (and is there
    // for the request's own record to settle, should it come).
    this.writer.enqueue({
      record,
      settle: { keys: [], deltas: [] },
      concurrencyKeys: request.concurrencyKeys,
      estimate: true,
    });
    // Counted in the metrics later, unless the request's own record replaces it first (countDueEstimates).
    this.pendingEstimates.set(record.id, { record, dueAt: now + ESTIMATE_WAIT_LEASES * this.leaseMs });
  }

  /**
   * Counts in this replica's metrics each estimate it wrote whose wait is over, unless the request's own record
   * replaced it or another survivor (that settled it too) counted it: the script lets one replica count it, once.
   */
  private async countDueEstimates(now: number): Promise<void> {
    const due = [...this.pendingEstimates.values()].filter((pending) => pending.dueAt <= now);
    if (due.length === 0) return;
    const answers = await batch(due.map(({ record }) => this.usage.countEstimate(record.team, record.id)));
    due.forEach(({ record, dueAt }, i) => {
      const [error, answer] = answers[i];
      if (error) return; // asked again on the next sweep
      if (answer === 'missing' && now - dueAt < ESTIMATE_GIVE_UP_MS) return; // not written yet (Redis was away)
      this.pendingEstimates.delete(record.id);
      if (answer === 'count') this.metrics.observeRequest(record, { total: record.latencyMs / 1000 });
    });
  }
}
