import type { Principal } from '../auth/principal';
import { GatewayException } from '../core/errors/gateway.exception';
import type { Reservation } from '../limits/limits.service';
import type { AttemptRecord } from '../core/request-outcome';
import type { RequestTrace } from './request-trace';

export type { AttemptRecord } from '../core/request-outcome';

/**
 * The billed API a request came to, as its usage record names it: what its endpoint's spec declares (`billedAs`:
 * chat.completions, embeddings, messages, responses), so a new endpoint names itself in its own folder.
 */
export type Endpoint = string;

/** The tokens one request used, as accounted. */
export interface TokenCounts {
  prompt: number;
  completion: number;
  reasoning: number;
  /** Prompt tokens the backend read from its cache (part of `prompt`; priced at the cached-input price). */
  cached?: number;
  /** Prompt tokens the backend wrote to its cache (part of `prompt`, apart from `cached`), 1-hour writes included. */
  cacheWrite?: number;
  /** The part of `cacheWrite` written for an hour (Anthropic's `ephemeral_1h_input_tokens`), billed at its own price. */
  cacheWrite1h?: number;
  /** Worked out by the gateway's tokenizer rather than reported by the upstream. */
  estimated: boolean;
}

/**
 * What one request did on its way through the gateway, recorded step by step: authenticated, routed, admitted
 * (or refused), calls started and answered (or every one failed), tokens counted, failed, left by its client.
 * Created for every request by the HTTP front (common/http/http-front.ts), so routes without a usage record (admin,
 * health) are logged from it too. Its writers: the AuthGuard (who is calling), the pipeline (gateway/pipeline.ts:
 * every step of a served request) and the error filter (the error a request that never reached the pipeline
 * ended in, a validation 400 say). The usage recorder, the access log and Server-Timing only read it (the recorder
 * also hands it its trace, when the gateway traces).
 */
export class Exchange {
  readonly startedAt = process.hrtime.bigint();
  private state: {
    principal?: Principal;
    endpoint?: Endpoint;
    model?: string;
    backend?: string;
    upstreamModel?: string;
    servedModel?: string;
    attempts?: number;
    stream?: boolean;
    recordId?: string;
    reservation?: Reservation;
    concurrencyKeys?: string[];
    limitRejected?: boolean;
    upstreamStartedAt?: bigint;
    upstreamEndedAt?: bigint;
    firstTokenAt?: bigint;
    tokens?: TokenCounts;
    errorCode?: string;
    upstreamErrorReason?: string;
    aborted?: boolean;
    attemptsMade?: AttemptRecord[];
    answer?: unknown;
    cacheHit?: boolean;
  } = {};
  private usageHold?: (work: Promise<unknown>) => void;
  private requestTrace?: RequestTrace;

  constructor(readonly requestId: string) {}

  // Steps, in the order a request takes them.

  /** Traced (only when `telemetry.otlp` is configured): set by the usage recorder as the request reaches its route. */
  traced(trace: RequestTrace): void {
    this.requestTrace = trace;
  }

  authenticated(principal: Principal): void {
    this.state.principal = principal;
  }

  /** Which API the request came to (chat completions, embeddings). */
  operation(endpoint: Endpoint): void {
    this.state.endpoint = endpoint;
  }

  streaming(stream: boolean): void {
    this.state.stream = stream;
  }

  /** The model asked for was found and allowed; its first deployment is where it goes unless it fails. */
  routed(model: string, backend: string, upstreamModel: string): void {
    Object.assign(this.state, { model, backend, upstreamModel });
  }

  /** Admitted by the limits: what it reserved and the concurrency leases it holds, under its record id. */
  admitted(recordId: string, reservation: Reservation | undefined, concurrencyKeys: string[]): void {
    Object.assign(this.state, { recordId, reservation, concurrencyKeys });
  }

  /** The record id is chosen before the admission (its concurrency lease carries it). */
  assignRecordId(recordId: string): void {
    this.state.recordId = recordId;
  }

  /** Refused by a team or token limit (recorded as `rejected`, not `error`). */
  refused(): void {
    this.state.limitRejected = true;
  }

  callStarted(): void {
    this.state.upstreamStartedAt = process.hrtime.bigint();
  }

  /** A call started early (a local model, before the admission) that the admission refused. */
  callWithdrawn(): void {
    this.state.upstreamStartedAt = undefined;
  }

  /** The deployment that answered (after `attempts` calls): a fallback's model when one did. */
  answered(by: { backend: string; upstreamModel: string; servedModel: string; attempts: number }): void {
    Object.assign(this.state, by);
  }

  /** Answered from the response cache (response-cache/): no backend was called; `servedModel` answered first. */
  answeredFromCache(servedModel: string): void {
    Object.assign(this.state, { backend: '', upstreamModel: '', servedModel, attempts: 0, cacheHit: true });
  }

  /** Every call failed: the last deployment tried and how many calls were made. */
  triedWithoutAnswer(by: { backend: string; upstreamModel: string; attempts: number }): void {
    Object.assign(this.state, by);
  }

  /** Every call made and candidate passed over, in order (once the calls are over, answered or not). */
  attempted(attempts: AttemptRecord[]): void {
    this.state.attemptsMade = attempts;
  }

  /** The answer, for the request log: set only when the caller's team keeps content (Principal.keepsContent). */
  answerForLog(answer: unknown): void {
    this.state.answer = answer;
  }

  /** The backend's whole answer has been read (the first time only: a later failure does not move it). */
  callEnded(): void {
    this.state.upstreamEndedAt ??= process.hrtime.bigint();
  }

  firstToken(at: bigint | undefined): void {
    this.state.firstTokenAt = at;
  }

  counted(tokens: TokenCounts): void {
    this.state.tokens = tokens;
  }

  /** Ended in an error the client got (its wire code); `upstreamReason` when it was the backend failing. */
  failed(errorCode: string, upstreamReason?: string): void {
    this.state.errorCode = errorCode;
    if (upstreamReason) this.upstreamFailed(upstreamReason);
  }

  /** The backend failed (a bounded metric label); the error the client gets may be recorded later. */
  upstreamFailed(reason: string): void {
    this.state.upstreamErrorReason = reason;
  }

  clientLeft(): void {
    this.state.aborted = true;
  }

  /** The usage recorder keeps the record open until the handler's work settles (set by the recorder only). */
  holdUsageWith(hold: (work: Promise<unknown>) => void): void {
    this.usageHold = hold;
  }

  holdUsage(work: Promise<unknown>): void {
    this.usageHold?.(work);
  }

  // What it says, for the recorder, the access log and Server-Timing.

  /** Who is calling, when authenticated (the access log and usage recorder see unauthenticated requests too). */
  get principal(): Principal | undefined {
    return this.state.principal;
  }
  /** Who is calling, on a route behind the AuthGuard (every route but @Public() ones): always known there. */
  get caller(): Principal {
    const principal = this.state.principal;
    if (!principal) throw new GatewayException('invalid_api_key', 'Authentication is required.');
    return principal;
  }
  get endpoint(): Endpoint | undefined {
    return this.state.endpoint;
  }
  get model(): string | undefined {
    return this.state.model;
  }
  get backend(): string | undefined {
    return this.state.backend;
  }
  get upstreamModel(): string | undefined {
    return this.state.upstreamModel;
  }
  get servedModel(): string | undefined {
    return this.state.servedModel;
  }
  get attempts(): number | undefined {
    return this.state.attempts;
  }
  get stream(): boolean | undefined {
    return this.state.stream;
  }
  get recordId(): string | undefined {
    return this.state.recordId;
  }
  get reservation(): Reservation | undefined {
    return this.state.reservation;
  }
  get concurrencyKeys(): string[] | undefined {
    return this.state.concurrencyKeys;
  }
  get limitRejected(): boolean | undefined {
    return this.state.limitRejected;
  }
  get upstreamStartedAt(): bigint | undefined {
    return this.state.upstreamStartedAt;
  }
  get upstreamEndedAt(): bigint | undefined {
    return this.state.upstreamEndedAt;
  }
  get firstTokenAt(): bigint | undefined {
    return this.state.firstTokenAt;
  }
  get tokens(): TokenCounts | undefined {
    return this.state.tokens;
  }
  get errorCode(): string | undefined {
    return this.state.errorCode;
  }
  get upstreamErrorReason(): string | undefined {
    return this.state.upstreamErrorReason;
  }
  get aborted(): boolean | undefined {
    return this.state.aborted;
  }
  get attemptsMade(): readonly AttemptRecord[] {
    return this.state.attemptsMade ?? [];
  }
  get answer(): unknown {
    return this.state.answer;
  }
  /** Answered from the response cache: recorded at no cost, its tokens not charged to token limits. */
  get cacheHit(): boolean {
    return this.state.cacheHit === true;
  }
  /** Its spans, when the gateway traces (the pipeline starts and ends its calls' spans through it). */
  get trace(): RequestTrace | undefined {
    return this.requestTrace;
  }
}

declare module 'express-serve-static-core' {
  interface Request {
    exchange: Exchange;
  }
}
