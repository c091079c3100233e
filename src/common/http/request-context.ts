import type { Principal } from '../../auth/principal';
import type { Reservation } from '../../limits/limits.service';

/** The tokens one request used, as accounted. */
export interface TokenCounts {
  prompt: number;
  completion: number;
  reasoning: number;
  /** Worked out by the gateway's tokenizer rather than reported by the upstream. */
  estimated: boolean;
}

/** What one request learns on its way through the gateway; the access log prints it. */
export interface RequestContext {
  requestId: string;
  startedAt: bigint;
  clientIp?: string;
  clientHost?: string;
  principal?: Principal;
  model?: string;
  /** The deployment that answered (or was tried last): its backend and model name there. */
  backend?: string;
  upstreamModel?: string;
  /** The configured model that answered, when a fallback did (else the model asked for). */
  servedModel?: string;
  /** Calls made to backends (retries and fallbacks included). */
  attempts?: number;
  stream?: boolean;
  tokens?: TokenCounts;
  /** Its usage record's id, chosen at admission (its in-flight lease and concurrency leases carry it). */
  recordId?: string;
  /** What the request reserved against token limits (settled when it is accounted). */
  reservation?: Reservation;
  /** Concurrency lease sets it is in (released when it is accounted). */
  concurrencyKeys?: string[];
  /** Refused by a team or token limit (accounted as `rejected`, not `error`). */
  limitRejected?: boolean;
  errorCode?: string;
  /** When the upstream call started and ended (its whole answer read), for the latency metrics. */
  upstreamStartedAt?: bigint;
  upstreamEndedAt?: bigint;
  /** When the first generated token was written to the client (streams). */
  firstTokenAt?: bigint;
  /** The gateway's error code for a failure that came from the backend (a bounded metric label). */
  upstreamErrorReason?: string;
  /** Set when the client went away before the response was complete. */
  aborted?: boolean;
  /** Set on billable routes by the usage recorder: keeps the usage record open until `work` settles. */
  usageHold?: (work: Promise<unknown>) => void;
}

declare module 'express-serve-static-core' {
  interface Request {
    ctx: RequestContext;
  }
}
