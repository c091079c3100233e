import type { ServerResponse } from 'node:http';
import { Injectable } from '@nestjs/common';
import type { Principal } from '../auth/principal';
import { LimitsService, type Reservation } from '../limits/limits.service';
import { worstCaseNanos } from '../billing/cost';
import type { Price } from '../billing/price-book';
import { InflightLeases, type LeasedRequest } from '../usage/inflight-leases';
import type { Exchange } from './exchange';

/** What an operation (chat, embeddings, ...) reserves for one request. */
/** What an admitted request holds: its reservation and concurrency leases, settled by its usage record. */
export interface Admitted {
  reservation: Reservation | undefined;
  concurrencyKeys: string[];
}

export interface AdmissionRequest {
  caller: Principal;
  /** The request's usage record id, chosen before the admission (its in-flight lease carries it). */
  recordId: string;
  model: string;
  stream: boolean;
  /** The prompt's tokens as token limits reserve them, and as the in-flight lease records them (no tokenizer). */
  promptEstimate: () => number;
  /** Completion tokens reserved on top (0 for an operation that generates none). */
  completionAllowance: number;
  /** The price of the deployment the request goes to first (budgets reserve its worst case); undefined: unknown. */
  price: Price | undefined;
}

/**
 * Admission, the same for every operation: one Redis call against the team's and token's limits (429 when one
 * is full; x-ratelimit-* headers otherwise) that also writes the request's in-flight lease, so a survivor
 * accounts it if this replica dies before it ends (with no limits, the lease is written on its own, not awaited).
 */
@Injectable()
export class RequestAdmission {
  constructor(
    private readonly limits: LimitsService,
    private readonly leases: InflightLeases,
  ) {}

  get leaseLength(): number {
    return this.leases.leaseLength;
  }

  /**
   * Admits the request under `recordId` (its in-flight lease and its usage record carry it) or throws the 429.
   * Says what it reserved; the pipeline writes it on the exchange.
   */
  async admit(exchange: Exchange, res: ServerResponse, request: AdmissionRequest): Promise<Admitted> {
    const { caller, recordId } = request;
    let estimate: number | undefined;
    const promptEstimate = () => (estimate ??= request.promptEstimate());
    const leased = (reserves: boolean, concurrencyKeys: string[]): LeasedRequest => ({
      recordId,
      requestId: exchange.requestId,
      team: caller.teamId,
      tokenId: caller.tokenId,
      model: request.model,
      endpoint: exchange.endpoint ?? 'chat.completions',
      backend: exchange.backend ?? '',
      upstreamModel: exchange.upstreamModel ?? '',
      stream: request.stream,
      // If this replica dies, the survivor bills what was reserved (with no token limit, the prompt's estimate).
      promptTokens: promptEstimate(),
      completionTokens: reserves ? request.completionAllowance : 0,
      admittedAt: Date.now(),
      concurrencyKeys,
    });
    let lease: LeasedRequest | undefined;
    const worstCase = () =>
      request.price
        ? worstCaseNanos(promptEstimate(), request.completionAllowance, request.price)
        : undefined;
    // The admission script writes the lease when it admits the request: one Redis command for both.
    const admission = await this.limits.admit(
      caller,
      () => promptEstimate() + request.completionAllowance,
      recordId,
      this.leases.leaseLength,
      worstCase,
      {
        key: this.leases.keyFor(caller.teamId),
        value: (reserves, concurrencyKeys) =>
          this.leases.serialize((lease = leased(reserves, concurrencyKeys))),
      },
    );
    for (const [name, value] of Object.entries(admission.headers)) res.setHeader(name, value);
    if (lease && admission.leaseWritten) this.leases.begin(lease, { written: true });
    // No limits (no script ran) or Redis unreachable (fail-open): the lease is written on its own.
    else
      this.leases.begin(leased(admission.reservation !== undefined, admission.concurrencyKeys), {
        written: false,
      });
    return { reservation: admission.reservation, concurrencyKeys: admission.concurrencyKeys };
  }
}
