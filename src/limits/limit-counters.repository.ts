import type { LimitName } from '../core/limit-catalogue';
import type { LimitWindow } from './limit-windows';

/** The Nest injection token of the LimitCounters repository (Redis in production, in memory in unit tests). */
export const LIMIT_COUNTERS = Symbol('LimitCounters');

/**
 * A limit counter or lease set as the repository names it. Services carry it from admission to the usage record
 * that settles or releases it (and into a request's in-flight lease), never build or read it.
 */
export type CounterId = string;

/** One limit an admission takes from: a team's (no tokenId) or a token's. */
export interface CounterTake {
  teamId: string;
  tokenId?: string;
  limit: LimitName;
  /** The fixed window a counter counts in; undefined for a lease set (requests in flight). */
  window?: LimitWindow;
  /** The counter's limit (nano-units for a budget). */
  max: number;
  /** What the request takes (1 for a lease). */
  cost: number;
}

export interface AdmitCall {
  now: number;
  /** The request's usage-record id: it names the request's lease in a lease set. */
  recordId: string;
  /** How long a lease lasts unless renewed (usage/inflight-leases.ts). */
  leaseMs: number;
  takes: CounterTake[];
  /**
   * The request's in-flight lease, written by the same call when it admits the request (one command, not two):
   * where (the in-flight leases' own id for the team) and what, given the lease sets the request is in.
   */
  inflight?: { key: string; value: (leaseSets: CounterId[]) => string };
}

export interface AdmitAnswer {
  /** The index in `takes` of the first limit that refused, or -1 when every one took its cost. */
  refused: number;
  /** Each take's counter after the call (its current value when refused), for the x-ratelimit-* headers. */
  values: number[];
  /** Each take's counter, in the order of `takes`. */
  counters: CounterId[];
}

/** One team-level counter to read (a quota gauge, a budget report). */
export interface CounterRead {
  teamId: string;
  limit: LimitName;
  window: LimitWindow;
}

/**
 * The limit counters and lease sets every replica shares. Admission is all or nothing: either every take fits under
 * its limit and all are taken, or none is.
 */
export interface LimitCounters {
  /** False while the store cannot be reached: the hot path then skips the call instead of waiting out a timeout. */
  readonly ready: boolean;
  /** The connection's state, for an error message ("redis is reconnecting"). */
  readonly state: string;
  admit(call: AdmitCall): Promise<AdmitAnswer>;
  /** One team counter (0 when it does not exist); rejects when the store cannot answer. */
  read(counter: CounterRead): Promise<number>;
  /** Many team counters at once; one that cannot be read reads 0. */
  readMany(counters: CounterRead[]): Promise<number[]>;
}
