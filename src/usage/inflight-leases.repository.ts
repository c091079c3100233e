import type { CounterId } from '../limits/limit-counters.repository';

/** The Nest injection token of the in-flight lease store (Redis in production). */
export const INFLIGHT_LEASE_STORE = Symbol('InflightLeaseStore');

/** A request's lease as renewed: where it is, what it says (JSON), and the lease sets it holds a place in. */
export interface LeaseRenewal {
  team: string;
  recordId: string;
  lease: string;
  leaseSets: CounterId[];
}

/**
 * What every replica shares about the requests in flight (usage/inflight-leases.ts): each team's leases, each
 * replica's heartbeat, the set of replicas that have served requests, and the teams each one has leased for.
 * Multi-command operations send their commands together and settle each on its own, as noted per method.
 */
export interface InflightLeaseStore {
  /** False while the store cannot be reached (writes are then skipped; renewal rewrites them later). */
  readonly ready: boolean;
  /** Where a team's leases are, as an admission writes one (LeaseToWrite.key, limits.service.ts). */
  leasesOf(team: string): string;
  /** Lists teams among those `replica` has leased for (where a sweep looks for its leases). */
  listTeams(replica: string, teams: string[]): Promise<void>;
  writeLease(team: string, recordId: string, lease: string): Promise<void>;
  /** Keeps `replica` alive for `leaseMs` and lists it among the replicas; true when the heartbeat was stored. */
  heartbeat(replica: string, leaseMs: number): Promise<boolean>;
  /** Rewrites each lease, extends its places in lease sets to `until`, lists its teams; never rejects. */
  renew(replica: string, leases: LeaseRenewal[], until: number): Promise<void>;
  replicas(): Promise<string[]>;
  /** Whether each replica's heartbeat is there (an Error when it could not be read). */
  alive(replicas: string[]): Promise<Array<boolean | Error>>;
  /** The leases (JSON) in each team `replica` has leased for, per team (an Error for a team that was not read). */
  leasesListedBy(replica: string): Promise<Array<string[] | Error>>;
  /** Forgets a lost replica that has nothing left to settle. */
  forget(replica: string): Promise<void>;
}
