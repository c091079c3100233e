import { randomUUID } from 'node:crypto';
import type { ServerResponse } from 'node:http';
import { Injectable } from '@nestjs/common';
import { GatewayException } from '../core/errors/gateway.exception';
import { LimitsService } from '../limits/limits.service';
import { worstCaseNanos } from '../billing/cost';
import type { Price } from '../billing/price-book';
import { InflightLeases, type LeasedRequest } from '../usage/inflight-leases';
import type { RequestLedger } from './request-ledger';

/** What an operation (chat, embeddings, ...) reserves for one request. */
export interface AdmissionRequest {
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

  async admit(ledger: RequestLedger, res: ServerResponse, request: AdmissionRequest): Promise<void> {
    const principal = ledger.principal!;
    const recordId = randomUUID();
    ledger.assignRecordId(recordId);
    let estimate: number | undefined;
    const promptEstimate = () => (estimate ??= request.promptEstimate());
    const leased = (reserves: boolean, concurrencyKeys: string[]): LeasedRequest => ({
      recordId,
      requestId: ledger.requestId,
      team: principal.teamId,
      tokenId: principal.tokenId,
      model: request.model,
      endpoint: ledger.endpoint ?? 'chat.completions',
      backend: ledger.backend ?? '',
      upstreamModel: ledger.upstreamModel ?? '',
      stream: request.stream,
      // If this replica dies, the survivor bills what was reserved (with no token limit, the prompt's estimate).
      promptTokens: promptEstimate(),
      completionTokens: reserves ? request.completionAllowance : 0,
      admittedAt: Date.now(),
      concurrencyKeys,
    });
    let lease: LeasedRequest | undefined;
    try {
      const worstCase = () =>
        request.price
          ? worstCaseNanos(promptEstimate(), request.completionAllowance, request.price)
          : undefined;
      // The admission script writes the lease when it admits the request: one Redis command for both.
      const admission = await this.limits.admit(
        principal,
        () => promptEstimate() + request.completionAllowance,
        recordId,
        this.leases.leaseLength,
        worstCase,
        {
          key: this.leases.keyFor(principal.teamId),
          value: (reserves, concurrencyKeys) =>
            this.leases.serialize((lease = leased(reserves, concurrencyKeys))),
        },
      );
      ledger.admitted(recordId, admission.reservation, admission.concurrencyKeys);
      for (const [name, value] of Object.entries(admission.headers)) res.setHeader(name, value);
      if (lease && admission.leaseWritten) return this.leases.begin(lease, { written: true });
    } catch (error) {
      if (error instanceof GatewayException && error.status === 429) ledger.refused();
      throw error;
    }
    // No limits (no script ran) or Redis unreachable (fail-open): the lease is written on its own.
    this.leases.begin(leased(ledger.reservation !== undefined, ledger.concurrencyKeys ?? []), {
      written: false,
    });
  }
}
