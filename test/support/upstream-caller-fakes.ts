import { AppLogger } from '../../src/common/logging/logger';
import { buildConfig } from 'config';
import { InFlightTracker } from '../../src/lifecycle/in-flight.tracker';
import { MetricsService } from '../../src/metrics/metrics.service';
import type { Backend } from '../../src/providers/provider-adapter';
import type { UpstreamResponse } from '../../src/providers/upstream-client';
import { BackendHealth } from '../../src/routing/backend-health';
import { CircuitBreakers } from '../../src/routing/circuit-breakers';
import type { Deployment, Route } from '../../src/routing/model-router.service';
import { UpstreamCaller, type Candidate } from '../../src/gateway/upstream-caller';

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
  /** Runs the route's plan; `called` lists the deployment of every call made, in order. */
  const run = (
    routed: Route,
    answer: (candidate: Candidate) => Promise<UpstreamResponse>,
    signal = new AbortController().signal,
  ) => {
    const called: string[] = [];
    const result = caller.call(
      caller.plan(routed),
      (candidate) => {
        called.push(candidate.deployment.id);
        return answer(candidate);
      },
      signal,
    );
    return { called, result };
  };
  return { caller, circuits, health, lines, metrics, route, routeBy, run };
}

export const okResponse = { status: 200, headers: {}, body: {} } as unknown as UpstreamResponse;

/** Ids of a plan's deployments, in order. */
export const deploymentsOf = (plan: Candidate[]) => plan.map((candidate) => candidate.deployment.id);
