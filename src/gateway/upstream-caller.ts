import { setTimeout as sleep } from 'node:timers/promises';
import { Injectable } from '@nestjs/common';
import { GatewayConfig } from '../config/config.schema';
import { GatewayException } from '../core/errors/gateway.exception';
import { MetricsService } from '../metrics/metrics.service';
import { isAbort } from '../providers/upstream-client';
import { CircuitBreakers } from '../routing/circuit-breakers';
import { BackendHealth } from '../routing/backend-health';
import { AppLogger } from '../common/logging/logger';
import { cutRequest, isRequestSignal } from '../common/http/request-abort';
import type { Deployment, Route, RoutedModel } from '../routing/model-router.service';
import type { AttemptRecord } from './exchange';

/** One call the plan may make: a deployment of a model (the one asked for, or a fallback). */
export interface Candidate {
  routed: RoutedModel;
  deployment: Deployment;
  fallback: boolean;
}

/** What happened to one candidate of the plan: called (and how it ended), or passed over before any call. */
export type Attempt =
  | {
      kind: 'call';
      model: string;
      deployment: Deployment;
      /** The gateway error it ended in, or `ok`. */ outcome: string;
      /** The upstream's HTTP status, when it answered at all. */
      status: number | null;
      /** From the call's start (after any backoff) to its answer's headers or its failure. */
      durationMs: number;
      /** What went wrong, in the gateway's words (the vendor's quoted where it said something); null when ok. */
      error: string | null;
    }
  | { kind: 'skipped'; model: string; deployment: Deployment; reason: string };

/**
 * Failures worth another call (to another deployment first): the backend could not be reached, timed out
 * before answering, was overloaded or rate-limiting, failed, refused our key, or every connection to it was
 * busy. Never the client's own mistakes (invalid_request: 400/413/422), which another deployment would refuse too.
 */
const RETRYABLE = new Set([
  'upstream_unreachable',
  'upstream_timeout',
  'upstream_unavailable',
  'upstream_error',
  'upstream_busy',
  'upstream_auth_failed',
  'rate_limit_exceeded',
]);

/**
 * Which deployment, how many attempts, retries with backoff (honouring Retry-After up to a cap), fallbacks to other
 * models, circuit breaking: the plan of a request's calls and the rules for going through it (`calls`). It makes
 * no call and knows nothing of HTTP to the client: the pipeline calls each candidate it hands out and says when
 * the backend answered 2xx (headers only, for a stream), so nothing is retried after the first byte.
 */
@Injectable()
export class UpstreamCaller {
  private readonly retries: number;
  private readonly backoffMs: number;
  private readonly maxRetryAfterMs: number;

  constructor(
    private readonly circuits: CircuitBreakers,
    private readonly metrics: MetricsService,
    private readonly config: GatewayConfig,
    private readonly health: BackendHealth,
    private readonly logger: AppLogger,
  ) {
    this.retries = config.routing.retries.attempts;
    this.backoffMs = config.routing.retries.backoffMs;
    this.maxRetryAfterMs = config.routing.retries.maxRetryAfterMs;
  }

  /**
   * The calls this request may make, handed out one at a time: the pipeline makes each call and says how it went
   * (`answered`, `failed`), so no callback runs from here back into the pipeline.
   */
  calls(route: Route, signal: AbortSignal, requestId?: string): CallSequence {
    return new CallSequence(this.plan(route), this, signal, requestId);
  }

  /**
   * The whole call's time limit (`timeouts.totalMs`, the model's or its first deployment's backend's), streams
   * included: an abort whose reason is a 504 upstream_timeout, which the client gets as such (in-band once
   * streaming). `clear` when the request is done, so no timer outlives it.
   */
  deadline(route: Route, requestSignal: AbortSignal): { signal: AbortSignal; clear: () => void } {
    const ms =
      route.config.timeouts?.totalMs ?? this.config.backends[route.backend.id]?.timeouts.totalMs ?? 0;
    if (!ms) return { signal: requestSignal, clear: () => undefined };
    const timeout = () =>
      new GatewayException(
        'upstream_timeout',
        `The model \`${route.model}\` did not finish within ${ms} ms (timeouts.totalMs).`,
      );
    if (isRequestSignal(requestSignal)) {
      // The request's own signal is cut: no second controller chained to it.
      const timer = setTimeout(() => cutRequest(requestSignal, timeout()), ms);
      return { signal: requestSignal, clear: () => clearTimeout(timer) };
    }
    const controller = new AbortController();
    const onRequestAbort = () => controller.abort(requestSignal.reason);
    requestSignal.addEventListener('abort', onRequestAbort, { once: true });
    const timer = setTimeout(() => controller.abort(timeout()), ms);
    return {
      signal: controller.signal,
      clear: () => {
        clearTimeout(timer);
        requestSignal.removeEventListener('abort', onRequestAbort);
      },
    };
  }

  /**
   * The calls this request may make, in order: for the model asked for and then each fallback, up to
   * 1 + retries calls, each to the next deployment by the model's strategy that is not known to be down (an open
   * circuit, an unreachable backend, a local model that cannot load: backend-health.ts), going round again when
   * there are fewer deployments than calls.
   */
  plan(route: Route): Candidate[] {
    const plan: Candidate[] = [];
    for (const [index, routed] of [route, ...route.fallbacks].entries()) {
      const ordered = this.order(routed);
      const up = ordered.filter((deployment) => this.health.downBecause(deployment) === undefined);
      const usable = up.length ? up : index === 0 && route.fallbacks.length === 0 ? ordered : [];
      for (let call = 0; call <= this.retries && usable.length; call++)
        plan.push({ routed, deployment: usable[call % usable.length], fallback: index > 0 });
    }
    // Every deployment is known to be down and nothing else can answer: try them anyway (a probe, in effect), so the
    // client gets the backend's own error rather than a guess.
    if (plan.length === 0) plan.push({ routed: route, deployment: this.order(route)[0], fallback: false });
    return plan;
  }

  /**
   * A backend's failure, told to the operator with what the backend said (scrubbed): at error level when it is the
   * deployment's own fault, which only a config change fixes (a refused key, an unknown upstream model), else warn.
   * The deployment's circuit counts it; its own fault opens the circuit at once.
   */
  /** Called by a CallSequence only. */
  failed(candidate: Candidate, error: GatewayException, requestId: string | undefined): void {
    const { deployment, routed } = candidate;
    const said = error.upstream
      ? ` (HTTP ${error.upstream.status}${error.upstream.message ? `: ${error.upstream.message}` : ''})`
      : '';
    const detail = error.upstream?.message ?? error.message;
    const fields = {
      requestId,
      model: routed.model,
      deployment: deployment.id,
      backend: deployment.backend.id,
      error: error.code,
      upstreamStatus: error.upstream?.status,
      reason: detail,
    };
    if (error.deploymentFault) {
      this.logger.pino.error(
        fields,
        `deployment ${deployment.id} cannot answer as configured: ${error.message}${said}; it is not called again for this request`,
      );
    } else {
      this.logger.pino.warn(fields, `deployment ${deployment.id} failed: ${error.message}`); // its message has the vendor's words
    }
    this.circuits.failure(deployment.id, error.code, { message: detail, openNow: error.deploymentFault });
    if (error.code === 'upstream_auth_failed') this.health.credentialsRefused(deployment.backend.id, detail);
  }

  /** A call's outcome, counted per deployment (called by a CallSequence only). */
  observe(deployment: Deployment, outcome: string): void {
    this.metrics.observeAttempt(deployment.id, outcome);
  }

  /** A request that needed more than one call, however it ended (called by a CallSequence only). */
  countRetry(model: string): void {
    this.metrics.retries.inc({ model });
  }

  /** Called by a CallSequence only. */
  succeeded(deployment: Deployment): void {
    this.circuits.success(deployment.id);
    this.health.answered(deployment.backend.id);
  }

  /** Plan order already left out open circuits; this takes a half-open circuit's single probe. */
  allows(deployment: Deployment): boolean {
    return this.circuits.allow(deployment.id);
  }

  /** The deployments of a model in the order this request tries them, by the model's strategy. */
  private order(routed: RoutedModel): Deployment[] {
    if (routed.deployments.length === 1) return routed.deployments; // the common case: nothing to order
    const byPriority = [...routed.deployments].sort((a, b) => a.priority - b.priority);
    if (routed.config.routing === 'priority') return byPriority;
    const tiers = new Map<number, Deployment[]>();
    for (const deployment of byPriority)
      tiers.set(deployment.priority, [...(tiers.get(deployment.priority) ?? []), deployment]);
    return [...tiers.values()].flatMap((tier) =>
      routed.config.routing === 'least-busy' ? leastBusyFirst(tier) : weightedShuffle(tier),
    );
  }

  /** Backoff before calling a deployment again: the upstream's Retry-After (capped), or jittered exponential. */
  waitBeforeRetry(error: unknown, round: number): number {
    const retryAfter = retryAfterMs(error);
    if (retryAfter !== undefined) return Math.min(retryAfter, this.maxRetryAfterMs);
    return Math.round(this.backoffMs * 2 ** Math.max(0, round - 1) * (0.5 + Math.random()));
  }

  tooLongToWait(error: unknown): boolean {
    const retryAfter = retryAfterMs(error);
    return retryAfter !== undefined && retryAfter > this.maxRetryAfterMs;
  }
}

function retryAfterMs(error: unknown): number | undefined {
  if (!(error instanceof GatewayException)) return undefined;
  const ms = Number(error.headers['retry-after-ms']);
  if (Number.isFinite(ms) && ms >= 0) return ms;
  const seconds = Number(error.headers['retry-after']);
  return Number.isFinite(seconds) && seconds >= 0 ? seconds * 1000 : undefined;
}

/** The planned call given to another deployment of the same model, in plan order, that is not at fault; if any. */
function instead(planned: Candidate, plan: Candidate[], faulty: Set<string>): Candidate | undefined {
  const other = plan.find(
    (candidate) => candidate.routed === planned.routed && !faulty.has(candidate.deployment.id),
  );
  return other && { ...planned, deployment: other.deployment };
}

/** Random order, each deployment's chance to be first proportional to its weight (weight 0: only last). */
function weightedShuffle(deployments: Deployment[]): Deployment[] {
  const left = [...deployments];
  const out: Deployment[] = [];
  while (left.length) {
    const total = left.reduce((sum, d) => sum + d.weight, 0);
    let pick = Math.random() * total;
    let at = left.findIndex((d) => (pick -= d.weight) < 0);
    if (at < 0) at = 0;
    out.push(left.splice(at, 1)[0]);
  }
  return out;
}

/** Fewest requests in flight on the deployment's backend first (ties keep their order). */
function leastBusyFirst(deployments: Deployment[]): Deployment[] {
  return [...deployments].sort(
    (a, b) => (a.backend.client.inFlight?.() ?? 0) - (b.backend.client.inFlight?.() ?? 0),
  );
}

/** Every call failed: the last error as it would have been, saying how many deployments were tried. */
function exhausted(lastError: unknown, attempts: Attempt[], skipped: Map<string, string>): unknown {
  let calls = 0;
  const deployments = new Set<Deployment>();
  for (const attempt of attempts)
    if (attempt.kind === 'call') {
      calls++;
      deployments.add(attempt.deployment);
    }
  if (!(lastError instanceof GatewayException)) {
    const why = [...skipped].map(([model, reason]) => `${model}: ${reason}`).join('; ');
    return (
      lastError ??
      new GatewayException(
        'upstream_unavailable',
        `No deployment could take the request${why ? ` (${why})` : ''}.`,
      )
    );
  }
  const note = ` (${calls} attempt${calls === 1 ? '' : 's'} on ${deployments.size} deployment${deployments.size === 1 ? '' : 's'}${skipped.size ? `; skipped ${[...skipped].map(([m, r]) => `${m}: ${r}`).join(', ')}` : ''})`;
  if (calls <= 1 && skipped.size === 0) return lastError;
  return new GatewayException(lastError.code, `${lastError.message.replace(/\.$/, '')}${note}.`, {
    status: lastError.status,
    type: lastError.type,
    param: lastError.param,
    wireCode: lastError.wireCode,
    headers: lastError.headers,
  });
}

/**
 * One request's way through its plan. The pipeline asks for the `next` candidate (after the backoff a retry
 * waits), makes the call itself, and says how it went: `answered`, or `failed` (which throws when nothing more may
 * be tried: the client left, or the failure is not worth another call). Candidates the request cannot take (a
 * fallback's vendor rules) are `exclude`d first and passed over, each reason said once.
 */
export class CallSequence {
  readonly attempts: Attempt[] = [];
  /** The candidate `next` handed out calls a deployment again: `backoff()` first. */
  mustWait = false;
  private waitMs = 0;
  private index = 0;
  private at = -1;
  /** When the call `next` handed out started (reset after its backoff). */
  private callStartedAt = 0;
  private stopped = false;
  private lastError: unknown;
  private excluded?: Map<string, string>;
  private readonly skipped = new Map<string, string>();
  private readonly tried = new Set<string>();
  /** Deployments whose failure was their own (a refused key, an unknown upstream model): never called again here. */
  private readonly faulty = new Set<string>();

  constructor(
    readonly plan: Candidate[],
    private readonly caller: UpstreamCaller,
    private readonly signal: AbortSignal,
    private readonly requestId?: string,
  ) {}

  /** The request cannot go to this candidate (its model on its deployment): pass it over, saying why. */
  exclude(candidate: Candidate, reason: string): void {
    (this.excluded ??= new Map()).set(keyOf(candidate), reason);
  }

  /**
   * The next candidate to call, undefined when the plan is done. When it calls a deployment again, `mustWait` says
   * so and `backoff()` is the wait before the call (synchronous otherwise: a first call awaits nothing here).
   */
  next(): Candidate | undefined {
    this.mustWait = false;
    while (!this.stopped && this.index < this.plan.length) {
      const index = this.index++;
      const planned = this.plan[index];
      // A call the plan gave a deployment at fault goes to another deployment of the same model, if it has one.
      const candidate = this.faulty.has(planned.deployment.id)
        ? instead(planned, this.plan, this.faulty)
        : planned;
      if (!candidate) continue;
      const reason = this.excluded?.get(keyOf(candidate));
      if (reason !== undefined) {
        const key = keyOf(candidate);
        if (!this.skipped.has(key)) {
          this.attempts.push({
            kind: 'skipped',
            model: candidate.routed.model,
            deployment: candidate.deployment,
            reason,
          });
          this.skipped.set(key, reason);
        }
        continue;
      }
      if (!this.caller.allows(candidate.deployment) && index > 0) continue;
      if (this.tried.has(candidate.deployment.id)) {
        // Our own capacity for it is full (a local queue, every connection busy): only another deployment can help.
        if (this.lastError instanceof GatewayException && this.lastError.atCapacity) continue;
        this.mustWait = true;
        this.waitMs = this.caller.waitBeforeRetry(this.lastError, this.tried.size);
      }
      this.tried.add(candidate.deployment.id);
      this.at = index;
      this.callStartedAt = performance.now();
      return candidate;
    }
    return undefined;
  }

  /** The backoff before calling again the deployment `next` handed out (rejects if the request is aborted meanwhile). */
  async backoff(): Promise<void> {
    await sleep(this.waitMs, undefined, { signal: this.signal });
    this.callStartedAt = performance.now();
  }

  /** Whether `candidate` is the plan's first call (a call started before the admission is for it). */
  isFirst(candidate: Candidate): boolean {
    return this.at === 0 && candidate === this.plan[0];
  }

  /** The candidate answered 2xx: the request's answer, and the end of its calls (nothing is retried after it). */
  answered(candidate: Candidate, status: number): void {
    this.stopped = true;
    this.caller.succeeded(candidate.deployment);
    this.record(candidate, 'ok', status, null);
    this.countRetries();
  }

  /**
   * The candidate's call failed. Throws the error when nothing more may be tried (the request was aborted, or the
   * failure is not worth another call: the client's own mistake, an unexpected error); otherwise the next call
   * may answer.
   */
  failed(candidate: Candidate, error: unknown): void {
    if (this.signal.aborted || isAbort(error)) throw error;
    const known = error instanceof GatewayException ? error : undefined;
    this.record(
      candidate,
      known?.code ?? 'internal_error',
      known?.upstream?.status ?? null,
      known?.message ?? 'an unexpected error',
    );
    const code = known?.code ?? 'internal_error';
    if (!(error instanceof GatewayException) || !RETRYABLE.has(code)) throw error;
    this.caller.failed(candidate, error, this.requestId);
    if (error.deploymentFault) this.faulty.add(candidate.deployment.id);
    this.lastError = error;
    if (
      this.caller.tooLongToWait(error) &&
      !this.plan.slice(this.at + 1).some((next) => !this.tried.has(next.deployment.id))
    )
      this.stopped = true;
  }

  /** No call answered: the error the client gets. */
  exhausted(): unknown {
    this.countRetries();
    return exhausted(this.lastError, this.attempts, this.skipped);
  }

  /** How many calls were made (skipped candidates are not calls). */
  get calls(): number {
    let calls = 0;
    for (const attempt of this.attempts) if (attempt.kind === 'call') calls++;
    return calls;
  }

  /** The deployment called last, if any was. */
  get lastCalled(): Deployment | undefined {
    for (let i = this.attempts.length - 1; i >= 0; i--)
      if (this.attempts[i].kind === 'call') return this.attempts[i].deployment;
    return undefined;
  }

  private record(candidate: Candidate, outcome: string, status: number | null, error: string | null): void {
    this.attempts.push({
      kind: 'call',
      model: candidate.routed.model,
      deployment: candidate.deployment,
      outcome,
      status,
      durationMs: Math.round((performance.now() - this.callStartedAt) * 100) / 100,
      error,
    });
    this.caller.observe(candidate.deployment, outcome);
  }

  private countRetries(): void {
    if (this.calls > 1) this.caller.countRetry(this.plan[0].routed.model);
  }
}

function keyOf(candidate: Candidate): string {
  return `${candidate.routed.model} on ${candidate.deployment.id}`;
}

/** The attempts as the exchange (and the request log) keeps them: deployments by name. */
export function attemptRecords(attempts: readonly Attempt[]): AttemptRecord[] {
  return attempts.map((attempt) =>
    attempt.kind === 'call'
      ? {
          kind: 'call',
          model: attempt.model,
          deployment: attempt.deployment.id,
          outcome: attempt.outcome,
          status: attempt.status,
          durationMs: attempt.durationMs,
          error: attempt.error,
        }
      : { kind: 'skipped', model: attempt.model, deployment: attempt.deployment.id, reason: attempt.reason },
  );
}
