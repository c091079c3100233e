import { Inject, Injectable } from '@nestjs/common';
import type Redis from 'ioredis';
import { batch } from '../redis/batch';
import { REDIS, redisReady } from '../redis/redis.module';
import { RedisKeys } from '../redis/redis-keys';
import type { InflightLeaseStore, LeaseRenewal } from './inflight-leases.repository';

/**
 * In-flight leases in Redis: a hash per team (`inflight:{team}`, record id -> lease, on the team's slot, so the
 * admission script writes it and the usage script deletes it), a heartbeat key per replica (`replica:<id>`), the
 * global set of replicas and, per replica, the set of teams it has leased for.
 */
@Injectable()
export class RedisInflightLeases implements InflightLeaseStore {
  constructor(
    @Inject(REDIS) private readonly redis: Redis,
    private readonly keys: RedisKeys,
  ) {}

  get ready(): boolean {
    return redisReady(this.redis);
  }

  leasesOf(team: string): string {
    return this.keys.inflight(team);
  }

  async listTeams(replica: string, teams: string[]): Promise<void> {
    await this.redis.sadd(this.keys.replicaTeams(replica), ...teams);
  }

  async writeLease(team: string, recordId: string, lease: string): Promise<void> {
    await this.redis.hset(this.keys.inflight(team), recordId, lease);
  }

  async heartbeat(replica: string, leaseMs: number): Promise<boolean> {
    const [[error]] = await batch([
      this.redis.set(this.keys.replicaAlive(replica), '1', 'PX', leaseMs),
      this.redis.sadd(this.keys.replicas(), replica),
    ]);
    return !error;
  }

  async renew(replica: string, leases: LeaseRenewal[], until: number): Promise<void> {
    const commands: Array<Promise<unknown>> = [];
    const teams = new Set<string>();
    for (const { team, recordId, lease, leaseSets } of leases) {
      commands.push(this.redis.hset(this.keys.inflight(team), recordId, lease));
      teams.add(team);
      for (const set of leaseSets) commands.push(this.redis.zadd(set, 'XX', until, recordId));
    }
    if (teams.size) commands.push(this.redis.sadd(this.keys.replicaTeams(replica), ...teams));
    await batch(commands); // a failed renewal is retried on the next tick
  }

  replicas(): Promise<string[]> {
    return this.redis.smembers(this.keys.replicas());
  }

  async alive(replicas: string[]): Promise<Array<boolean | Error>> {
    const answers = await batch(
      replicas.map((replica) => this.redis.exists(this.keys.replicaAlive(replica))),
    );
    return answers.map(([error, exists]) => error ?? exists !== 0);
  }

  async leasesListedBy(replica: string): Promise<Array<string[] | Error>> {
    const teams = await this.redis.smembers(this.keys.replicaTeams(replica));
    const entries = await batch(teams.map((team) => this.redis.hgetall(this.keys.inflight(team))));
    return entries.map(([error, entry]) => error ?? Object.values(entry as Record<string, string>));
  }

  async forget(replica: string): Promise<void> {
    await batch([
      this.redis.srem(this.keys.replicas(), replica),
      this.redis.del(this.keys.replicaTeams(replica)),
    ]);
  }
}
