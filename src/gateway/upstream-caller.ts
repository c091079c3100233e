import { setTimeout as sleep } from 'node:timers/promises';
import { Injectable } from '@nestjs/common';
import { GatewayConfig } from '../config/config.schema';
import { GatewayException } from '../core/errors/gateway.exception';
import { MetricsService } from '../metrics/metrics.service';
import { isAbort, type UpstreamResponse } from '../providers/upstream-client';
import { CircuitBreakers } from '../routing/circuit-breakers';
import { BackendHealth } from '../routing/backend-health';
import { AppLogger } from '../common/logging/logger';
import { cutRequest, isRequestSignal } from '../common/http/request-abort';
import type { RequestLedger } from './request-ledger';
import type { Deployment, Route, RoutedModel } from '../routing/model-router.service';

/** One call the plan may make: a deployment of a model (the one asked for, or a fallback). */
export interface Candidate {
  routed: RoutedModel;
  deployment: Deployment;
  fallback: boolean;
}

/** What one attempt did, for the usage record and the logs. */
export interface AttemptRecord {
  model: string;
  deployment: string;
  /** The gateway error it ended in, or `ok`. */
  outcome: string;
}

export interface CallResult {
  response: UpstreamResponse;
  candidate: Candidate;
  attempts: AttemptRecord[];
}

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
 * The one seam every upstream call goes through: which deployment, how many attempts, retries with backoff
 * (honouring Retry-After up to a cap), fallbacks to other models, circuit breaking. It knows nothing of HTTP
 * to the client: `attempt` sends one call and resolves once the backend answered 2xx (headers only, for a
 * stream), so nothing is retried after the first byte reached the client.
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
   * Admits the request and starts its calls; resolves once admitted, with the calls under way (a refusal throws
   * here; the last backend failure, after retries and fallbacks, when `result` is awaited). A first deployment
   * whose client `cancelsAtNoCost` (a local model) is started before the admission, so its prompt evaluation
   * overlaps the admission's Redis round trip (measured in bench/local-model.mjs); nothing it produces reaches the
   * client before the admission, and a refusal cancels it. A vendor is always admitted first: it may bill a prompt
   * it has received.
   */
  async start(request: {
    route: Route;
    ledger: RequestLedger;
    signal: AbortSignal;
    admit: () => Promise<void>;
    attempt: (candidate: Candidate, signal: AbortSignal) => Promise<UpstreamResponse>;
    skip: (candidate: Candidate) => string | undefined;
  }): Promise<{ result: Promise<CallResult> }> {
    const { route, ledger, signal, admit } = request;
    const plan = this.plan(route);
    // Filled as the calls are made, so a request whose every call failed is still recorded with them.
    const attempts: AttemptRecord[] = [];
    const run = (first?: Promise<UpstreamResponse>) =>
      this.call(plan, (candidate) => request.attempt(candidate, signal), signal, {
        skip: request.skip,
        first,
        attempts,
        requestId: ledger.requestId,
      }).catch((error: unknown) => {
        const calls = attempts.filter((a) => a.deployment !== '-');
        if (calls.length) {
          const last = calls[calls.length - 1].deployment;
          ledger.triedWithoutAnswer({
            backend: last.slice(0, last.indexOf('/')),
            upstreamModel: last.slice(last.indexOf('/') + 1),
            attempts: calls.length,
          });
        }
        throw error;
      });
    if (!plan[0].deployment.backend.client.cancelsAtNoCost) {
      await admit();
      ledger.callStarted();
      return { result: run() };
    }
    const refused = new AbortController();
    ledger.callStarted();
    const first = request.attempt(plan[0], AbortSignal.any([signal, refused.signal]));
    first.catch(() => undefined); // awaited by `call` once admitted; moot if the admission refuses
    try {
      await admit();
    } catch (error) {
      refused.abort();
      ledger.callWithdrawn();
      throw error;
    }
    return { result: run(first) };
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
   * Runs the plan: the first call that succeeds wins. `skip` names a reason to pass a candidate over (a fallback
   * whose vendor rules the request breaks); `first` is a call already started for plan[0] (a local model starts
   * before the admission).
   */
  async call(
    plan: Candidate[],
    attempt: (candidate: Candidate) => Promise<UpstreamResponse>,
    signal: AbortSignal,
    options: {
      skip?: (candidate: Candidate) => string | undefined;
      first?: Promise<UpstreamResponse>;
      attempts?: AttemptRecord[];
      requestId?: string;
    } = {},
  ): Promise<CallResult> {
    const attempts = options.attempts ?? [];
    const skipped = new Map<string, string>();
    const tried = new Set<string>();
    /** Deployments whose failure was their own (a refused key, an unknown upstream model): never called again here. */
    const faulty = new Set<string>();
    let lastError: unknown;
    for (const [index, planned] of plan.entries()) {
      // A call the plan gave a deployment at fault goes to another deployment of the same model, if it has one.
      const candidate = faulty.has(planned.deployment.id) ? instead(planned, plan, faulty) : planned;
      if (!candidate) continue;
      const key = `${candidate.routed.model} on ${candidate.deployment.id}`;
      const reason = skipped.get(key) ?? options.skip?.(candidate);
      if (reason !== undefined) {
        if (!skipped.has(key))
          attempts.push({ model: candidate.routed.model, deployment: '-', outcome: `skipped: ${reason}` });
        skipped.set(key, reason);
        continue;
      }
      // Plan order already left out open circuits; this takes a half-open circuit's single probe.
      if (!this.circuits.allow(candidate.deployment.id) && index > 0) continue;
      if (tried.has(candidate.deployment.id)) {
        // Our own capacity for it is full (a local queue, every connection busy): only another deployment can help.
        if (lastError instanceof GatewayException && lastError.atCapacity) continue;
        await sleep(this.waitBeforeRetry(lastError, tried.size), undefined, { signal });
      }
      tried.add(candidate.deployment.id);
      try {
        const response = await (index === 0 && options.first ? options.first : attempt(candidate));
        this.circuits.success(candidate.deployment.id);
        this.health.answered(candidate.deployment.backend.id);
        this.record(attempts, {
          model: candidate.routed.model,
          deployment: candidate.deployment.id,
          outcome: 'ok',
        });
        this.countRetries(plan, attempts);
        return { response, candidate, attempts };
      } catch (error) {
        if (signal.aborted || isAbort(error)) throw error;
        const code = error instanceof GatewayException ? error.code : 'internal_error';
        this.record(attempts, {
          model: candidate.routed.model,
          deployment: candidate.deployment.id,
          outcome: code,
        });
        if (!(error instanceof GatewayException) || !RETRYABLE.has(code)) throw error;
        this.failed(candidate, error, options.requestId);
        if (error.deploymentFault) faulty.add(candidate.deployment.id);
        lastError = error;
        if (
          this.tooLongToWait(error) &&
          !plan.slice(index + 1).some((next) => !tried.has(next.deployment.id))
        )
          break;
      }
    }
    this.countRetries(plan, attempts);
    throw exhausted(lastError, attempts, skipped);
  }

  /**
   * A backend's failure, told to the operator with what the backend said (scrubbed): at error level when it is the
   * deployment's own fault, which only a config change fixes (a refused key, an unknown upstream model), else warn.
   * The deployment's circuit counts it; its own fault opens the circuit at once.
   */
  private failed(candidate: Candidate, error: GatewayException, requestId: string | undefined): void {
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

  /** A request that needed more than one call, however it ended. */
  private countRetries(plan: Candidate[], attempts: AttemptRecord[]): void {
    if (attempts.filter((a) => a.deployment !== '-').length > 1)
      this.metrics.retries.inc({ model: plan[0].routed.model });
  }

  private record(attempts: AttemptRecord[], attempt: AttemptRecord): void {
    attempts.push(attempt);
    this.metrics.observeAttempt(attempt.deployment, attempt.outcome);
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
  private waitBeforeRetry(error: unknown, round: number): number {
    const retryAfter = retryAfterMs(error);
    if (retryAfter !== undefined) return Math.min(retryAfter, this.maxRetryAfterMs);
    return Math.round(this.backoffMs * 2 ** Math.max(0, round - 1) * (0.5 + Math.random()));
  }

  private tooLongToWait(error: unknown): boolean {
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
function exhausted(lastError: unknown, attempts: AttemptRecord[], skipped: Map<string, string>): unknown {
  const calls = attempts.filter((a) => a.deployment !== '-');
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
  const deployments = new Set(calls.map((a) => a.deployment)).size;
  const note = ` (${calls.length} attempt${calls.length === 1 ? '' : 's'} on ${deployments} deployment${deployments === 1 ? '' : 's'}${skipped.size ? `; skipped ${[...skipped].map(([m, r]) => `${m}: ${r}`).join(', ')}` : ''})`;
  if (calls.length <= 1 && skipped.size === 0) return lastError;
  return new GatewayException(lastError.code, `${lastError.message.replace(/\.$/, '')}${note}.`, {
    status: lastError.status,
    type: lastError.type,
    param: lastError.param,
    wireCode: lastError.wireCode,
    headers: lastError.headers,
  });
}
