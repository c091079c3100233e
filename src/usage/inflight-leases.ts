import { Inject, Injectable, type OnApplicationShutdown, type OnModuleInit } from '@nestjs/common';
import type Redis from 'ioredis';
import { GatewayConfig } from '../config/config.schema';
import { AppLogger } from '../common/logging/logger';
import { MetricsService } from '../metrics/metrics.service';
import { REDIS, redisReady } from '../redis/redis.module';
import { RedisKeys } from '../redis/redis-keys';
import { withCost, type UsageRecord } from './usage-record';
import { PriceBook } from '../billing/price-book';
import { UsageWriter } from './usage-writer';
import { batch } from '../redis/batch';

/**
 * What a survivor records for a request whose replica died: the request as admitted (the fields of its usage
 * record it already knows), and what it reserved, billed if the replica dies (prompt estimate + completion
 * allowance when there is a reservation).
 */
export type LeasedRequest = Pick<UsageRecord, 'requestId' | 'team' | 'tokenId' | 'model' | 'backend' | 'upstreamModel' | 'stream' | 'promptTokens' | 'completionTokens' | 'endpoint'> & {
  recordId: string;
  admittedAt: number;
  /** Concurrency lease sets holding this request (released when it is accounted). */
  concurrencyKeys: string[];
};

/** Most expired leases one sweep settles (the rest wait for the next sweep). */
const SWEEP_BATCH = 100;

/**
 * Every admitted request is written to Redis when it is admitted (a hash entry on the team's slot plus a
 * member of a global index, scored with its lease's end) and renewed by its replica every third of
 * `usage.leaseSeconds` while it runs. Accounting it removes both (usage-writer.ts). If its replica dies
 * (SIGKILL, OOM, a lost node), its leases stop being renewed, and whichever replica sweeps first writes its
 * usage record: what it reserved, marked estimated, `error_code: replica_lost`. The record has the id the
 * request's own record would have had, so if the replica was only cut off from Redis and writes it later, the
 * one Lua script that writes records keeps the first and ignores the second: one record per request, always.
 */
@Injectable()
export class InflightLeases implements OnModuleInit, OnApplicationShutdown {
  private readonly open = new Map<string, LeasedRequest>();
  private renewTimer?: NodeJS.Timeout;
  private sweepTimer?: NodeJS.Timeout;
  private readonly leaseMs: number;

  constructor(
    @Inject(REDIS) private readonly redis: Redis,
    private readonly keys: RedisKeys,
    private readonly writer: UsageWriter,
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

  onModuleInit(): void {
    const every = Math.max(100, Math.floor(this.leaseMs / 3));
    this.renewTimer = setInterval(() => void this.renew(), every);
    this.renewTimer.unref();
    // Sweeps are spread out a little so replicas do not all sweep in the same instant.
    this.sweepTimer = setInterval(() => void this.sweep(), every + Math.floor(Math.random() * every));
    this.sweepTimer.unref();
  }

  onApplicationShutdown(): void {
    clearInterval(this.renewTimer);
    clearInterval(this.sweepTimer);
  }

  /** Records the request in Redis (not awaited: it rides the next pipelined write, off the request's path). */
  begin(request: LeasedRequest): void {
    this.open.set(request.recordId, request);
    if (!redisReady(this.redis)) return; // renewal writes it once Redis is back
    this.write(request).catch(() => undefined);
  }

  /** The request was accounted (its record is queued; the writer removes the entries in Redis). */
  end(recordId: string): LeasedRequest | undefined {
    const request = this.open.get(recordId);
    this.open.delete(recordId);
    return request;
  }

  indexMember(team: string, recordId: string): string {
    return `${team}|${recordId}`;
  }

  private async write(request: LeasedRequest): Promise<void> {
    const until = Date.now() + this.leaseMs;
    await Promise.all([
      this.redis.hset(this.keys.inflight(request.team), request.recordId, JSON.stringify(request)),
      this.redis.zadd(this.keys.inflightIndex(), until, this.indexMember(request.team, request.recordId)),
    ]);
  }

  /** Extends the lease of every request this replica is still serving (one pipeline). */
  private async renew(): Promise<void> {
    if (this.open.size === 0 || !redisReady(this.redis)) return;
    const until = Date.now() + this.leaseMs;
    const commands: Array<Promise<unknown>> = [];
    for (const request of this.open.values()) {
      // Written in full (not only renewed): after an outage its first write may never have happened.
      commands.push(this.redis.hset(this.keys.inflight(request.team), request.recordId, JSON.stringify(request)));
      commands.push(this.redis.zadd(this.keys.inflightIndex(), until, this.indexMember(request.team, request.recordId)));
      for (const key of request.concurrencyKeys) commands.push(this.redis.zadd(key, 'XX', until, request.recordId));
    }
    await batch(commands); // a failed renewal is retried on the next tick
  }

  /** Settles requests whose lease ran out: their replica stopped renewing them. */
  async sweep(): Promise<number> {
    if (!redisReady(this.redis)) return 0;
    let settled = 0;
    try {
      const expired = await this.redis.zrangebyscore(this.keys.inflightIndex(), '-inf', Date.now(), 'LIMIT', 0, SWEEP_BATCH);
      for (const member of expired) {
        const split = member.lastIndexOf('|');
        const team = member.slice(0, split);
        const recordId = member.slice(split + 1);
        if (this.open.has(recordId)) continue; // ours and alive: the renewal is late, not missing
        const payload = await this.redis.hget(this.keys.inflight(team), recordId);
        if (!payload) {
          // Accounted already; only its index entry was left behind.
          await this.redis.zrem(this.keys.inflightIndex(), member);
          continue;
        }
        this.settleLost(JSON.parse(payload) as LeasedRequest, member);
        settled++;
      }
    } catch (error) {
      this.logger.pino.warn({ err: error }, 'in-flight sweep failed; will retry');
    }
    return settled;
  }

  private settleLost(request: LeasedRequest, member: string): void {
    const now = Date.now();
    const record: UsageRecord = withCost({
      id: request.recordId,
      at: new Date(now).toISOString(),
      requestId: request.requestId,
      team: request.team,
      tokenId: request.tokenId,
      model: request.model,
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
    }, this.prices.priceOf({ model: request.model, backend: request.backend, upstreamModel: request.upstreamModel }));
    this.logger.pino.warn({ team: record.team, requestId: record.requestId, recordId: record.id }, 'settling a request whose replica stopped renewing its lease');
    // No settlement delta: what it reserved stays charged against the limits, as the record says.
    this.writer.enqueue({ record, settle: { keys: [], deltas: [] }, concurrencyKeys: request.concurrencyKeys, leaseMember: member });
    this.metrics.observeRequest(record, { total: record.latencyMs / 1000 });
  }
}
