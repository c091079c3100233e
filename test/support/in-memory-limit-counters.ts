import type {
  AdmitAnswer,
  AdmitCall,
  CounterId,
  CounterRead,
  CounterTake,
  LimitCounters,
} from '../../src/limits/limit-counters.repository';

/**
 * The LimitCounters repository in memory, with the admission's contract (the Lua script's, tested against a real
 * Redis in test/e2e/redis-scripts.e2e.spec.ts): all or nothing, the first refusing take named, each value after
 * the call (or as it was when refused), expired leases dropped before a lease set is counted. Windows never
 * expire here: a test moves to another window by moving the clock. `ready = false` is an outage; `failWith`
 * makes the next admission reject.
 */
export class InMemoryLimitCounters implements LimitCounters {
  ready = true;
  readonly counters = new Map<CounterId, number>();
  /** Lease set -> record id -> lease end (ms). */
  readonly leaseSets = new Map<CounterId, Map<string, number>>();
  /** In-flight leases written by admissions: key -> record id -> lease. */
  readonly inflight = new Map<string, Map<string, string>>();
  readonly admitted: AdmitCall[] = [];
  failWith?: Error;

  get state(): string {
    return this.ready ? 'ready' : 'reconnecting';
  }

  async admit(call: AdmitCall): Promise<AdmitAnswer> {
    this.admitted.push(call);
    if (this.failWith) throw this.failWith;
    const counters = call.takes.map(counterOf);
    const values = call.takes.map((take, i) => {
      if (take.window !== undefined) return this.counters.get(counters[i]) ?? 0;
      const leases = this.leaseSet(counters[i]);
      for (const [id, end] of leases) if (end <= call.now) leases.delete(id);
      return leases.size;
    });
    const refused = call.takes.findIndex((take, i) => values[i] + take.cost > take.max);
    if (refused >= 0) return { refused, values, counters };
    call.takes.forEach((take, i) => {
      if (take.window === undefined) this.leaseSet(counters[i]).set(call.recordId, call.now + call.leaseMs);
      else this.counters.set(counters[i], values[i] + take.cost);
    });
    const after = call.takes.map((take, i) =>
      take.window === undefined ? this.leaseSet(counters[i]).size : this.counters.get(counters[i])!,
    );
    if (call.inflight) {
      const leaseSets = counters.filter((_, i) => call.takes[i].window === undefined);
      const hash = this.inflight.get(call.inflight.key) ?? new Map<string, string>();
      hash.set(call.recordId, call.inflight.value(leaseSets));
      this.inflight.set(call.inflight.key, hash);
    }
    return { refused: -1, values: after, counters };
  }

  async read(counter: CounterRead): Promise<number> {
    if (!this.ready) throw new Error('connection is reconnecting');
    return this.counters.get(counterOf({ ...counter, max: 0, cost: 0 })) ?? 0;
  }

  async readMany(counters: CounterRead[]): Promise<number[]> {
    return counters.map((counter) => this.counters.get(counterOf({ ...counter, max: 0, cost: 0 })) ?? 0);
  }

  /** What the usage script does with a settlement: each delta added to a counter that still exists. */
  settle(keys: CounterId[], deltas: number[]): void {
    keys.forEach((key, i) => {
      const value = this.counters.get(key);
      if (value !== undefined) this.counters.set(key, value + deltas[i]);
    });
  }

  /** The counter a take or read names (readable in test failures). */
  static counterOf = (take: Omit<CounterTake, 'max' | 'cost'>): CounterId =>
    counterOf({ ...take, max: 0, cost: 0 });

  private leaseSet(id: CounterId): Map<string, number> {
    let set = this.leaseSets.get(id);
    if (!set) this.leaseSets.set(id, (set = new Map()));
    return set;
  }
}

function counterOf({ teamId, tokenId, limit, window }: CounterTake): CounterId {
  const scope = tokenId === undefined ? 'team' : `tok:${tokenId}`;
  return window === undefined ? `${teamId}/${scope}/leases` : `${teamId}/${scope}/${limit}/${window.id}`;
}
