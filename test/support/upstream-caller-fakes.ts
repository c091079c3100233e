import { AppLogger } from '../../src/common/logging/logger';
import { buildConfig } from './config';
import { InFlightTracker } from '../../src/lifecycle/in-flight.tracker';
import { MetricsService } from '../../src/metrics/metrics.service';
import type { Backend } from '../../src/providers/provider-adapter';
import type { UpstreamResponse } from '../../src/providers/upstream-client';
import { BackendHealth } from '../../src/routing/backend-health';
import { CircuitBreakers } from '../../src/routing/circuit-breakers';
import type { Deployment, Route } from '../../src/routing/model-router.service';
import { UpstreamCaller, type CallSequence, type Candidate } from '../../src/gateway/upstream-caller';

/**
 * An UpstreamCaller wired to its real collaborators (circuit breakers, backend health, metrics, logger) over
 * in-memory backends: a deployment is `<backend>/m`, and nothing is sent anywhere; a test's `answer` decides what
 * each call does.
 */
export interface CallerOptions {
  attempts?: number;
  backoffMs?: number;
  maxRetryAfterMs?: number;
  circuitFailures?: number;
  circuitCooldownMs?: number;
  /** Backends known to be unusable, with why (BackendHealth.downBecause). */
  down?: Record<string, string>;
  inFlight?: Record<string, number>;
  priorities?: Record<string, number>;
  weights?: Record<string, number>;
  totalMs?: number;
}

export function callerWithFakes(options: CallerOptions = {}) {
  const config = buildConfig(
    {
      admin: { apiKey: 'k' },
      routing: {
        retries: {
          attempts: options.attempts ?? 2,
          backoffMs: options.backoffMs ?? 0,
          maxRetryAfterMs: options.maxRetryAfterMs ?? 2000,
        },
        circuit: { failures: options.circuitFailures ?? 5, cooldownMs: options.circuitCooldownMs ?? 60_000 },
      },
    },
    {},
  );
  const lines: Array<Record<string, unknown>> = [];
  const logger = new AppLogger('info', { write: (line: string) => void lines.push(JSON.parse(line)) });
  const metrics = new MetricsService(config, new InFlightTracker());
  const backends = new Map<string, Backend>();
  const backend = (id: string): Backend => {
    if (!backends.has(id))
      backends.set(id, {
        id,
        adapter: {} as Backend['adapter'],
        client: {
          send: jest.fn(),
          transportError: (e) => e,
          close: async () => undefined,
          unusable: () => options.down?.[id],
          inFlight: () => options.inFlight?.[id] ?? 0,
        },
      });
    return backends.get(id)!;
  };
  const circuits = new CircuitBreakers(config, metrics, logger);
  const health = new BackendHealth(backends, circuits, config, logger);
  const caller = new UpstreamCaller(circuits, metrics, config, health, logger);
  const deployment = (id: string): Deployment => ({
    id: `${id}/m`,
    backend: backend(id),
    upstreamModel: 'm',
    weight: options.weights?.[id] ?? 1,
    priority: options.priorities?.[id] ?? 0,
  });
  const routeBy = (routing: string, ...ids: string[]): Route => {
    const deployments = ids.map(deployment);
    return {
      model: `model-${ids.join('-')}`,
      config: {
        ...config.models.x,
        routing,
        ...(options.totalMs ? { timeouts: { totalMs: options.totalMs } } : {}),
      } as Route['config'],
      deployments,
      backend: deployments[0].backend,
      fallbacks: [],
    };
  };
  const route = (...ids: string[]) => routeBy('priority', ...ids);
  /**
   * Runs the route's calls as the pipeline does (`callThrough`); `exclude` names a reason to pass a candidate over
   * (a fallback's vendor rules). `called` lists the deployment of every call made, in order; `calls` is the
   * sequence, for what it recorded.
   */
  const run = (
    routed: Route,
    answer: (candidate: Candidate) => Promise<UpstreamResponse>,
    options: { signal?: AbortSignal; exclude?: (candidate: Candidate) => string | undefined } = {},
  ) => {
    const called: string[] = [];
    const calls = caller.calls(routed, options.signal ?? new AbortController().signal, 'req-1');
    for (const candidate of calls.plan) {
      const reason = options.exclude?.(candidate);
      if (reason !== undefined) calls.exclude(candidate, reason);
    }
    const result = callThrough(calls, (candidate) => {
      called.push(candidate.deployment.id);
      return answer(candidate);
    });
    return { called, result, calls };
  };
  return { caller, circuits, health, lines, metrics, route, routeBy, run };
}

/**
 * Goes through a request's calls as the pipeline's `callUntilAnswered` does: the next candidate (after any backoff),
 * its call, then `answered` or `failed` (which throws when nothing more may be tried); `exhausted` when none answered.
 */
export async function callThrough(
  calls: CallSequence,
  answer: (candidate: Candidate) => Promise<UpstreamResponse>,
): Promise<{ response: UpstreamResponse; candidate: Candidate }> {
  for (let candidate = calls.next(); candidate; candidate = calls.next()) {
    try {
      if (calls.mustWait) await calls.backoff();
      const response = await answer(candidate);
      calls.answered(candidate, response.status);
      return { response, candidate };
    } catch (error) {
      calls.failed(candidate, error);
    }
  }
  throw calls.exhausted();
}

export const okResponse = { status: 200, headers: {}, body: {} } as unknown as UpstreamResponse;

/** Ids of a plan's deployments, in order. */
export const deploymentsOf = (plan: Candidate[]) => plan.map((candidate) => candidate.deployment.id);
