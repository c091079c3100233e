import { GatewayException } from '../../src/common/errors/gateway.exception';
import { AppLogger } from '../../src/common/logging/logger';
import { buildConfig } from '../../src/config/config.loader';
import { InFlightTracker } from '../../src/lifecycle/in-flight.tracker';
import { MetricsService } from '../../src/metrics/metrics.service';
import type { Backend } from '../../src/providers/provider-adapter';
import type { UpstreamResponse } from '../../src/providers/shared/upstream-client';
import { mapUpstreamError } from '../../src/providers/shared/upstream-errors';
import { BackendHealth } from '../../src/routing/backend-health';
import { CircuitBreakers } from '../../src/routing/circuit-breakers';
import type { Deployment, Route } from '../../src/routing/model-router.service';
import { UpstreamCaller, type Candidate } from '../../src/routing/upstream-caller';

/** The routing seam against in-memory backends: which deployments a request calls, and what the operator is told. */
function setup(
  backendFaults: Record<string, string | undefined> = {},
  options: { inFlight?: Record<string, number>; maxRetryAfterMs?: number } = {},
) {
  const config = buildConfig(
    {
      admin: { apiKey: 'k' },
      routing: {
        retries: { attempts: 2, backoffMs: 0, maxRetryAfterMs: options.maxRetryAfterMs ?? 2000 },
        circuit: { failures: 5, cooldownMs: 60_000 },
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
          unusable: () => backendFaults[id],
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
    weight: 1,
    priority: 0,
  });
  const routeBy = (routing: string, ...ids: string[]): Route => {
    const deployments = ids.map(deployment);
    return {
      model: 'model',
      config: { ...config.models.x, routing } as Route['config'],
      deployments,
      backend: deployments[0].backend,
      fallbacks: [],
    };
  };
  const route = (...ids: string[]) => routeBy('priority', ...ids);
  return { caller, circuits, lines, route, routeBy };
}

const ok = { status: 200, headers: {}, body: {} } as unknown as UpstreamResponse;
const refusedKey = () =>
  mapUpstreamError({
    backendId: 'bad',
    status: 401,
    message: 'Incorrect API key provided: sk-abc****wxyz1234',
    headers: {},
    secrets: ['sk-abcdefgh-wxyz1234'],
  });
const serverError = () =>
  mapUpstreamError({ backendId: 'x', status: 500, message: 'boom', headers: {}, secrets: [] });

describe('UpstreamCaller', () => {
  const run = (
    caller: UpstreamCaller,
    route: Route,
    answer: (candidate: Candidate) => Promise<UpstreamResponse>,
    signal = new AbortController().signal,
  ) => {
    const called: string[] = [];
    const result = caller.call(
      caller.plan(route),
      (candidate) => {
        called.push(candidate.deployment.id);
        return answer(candidate);
      },
      signal,
    );
    return { called, result };
  };

  it('never calls a deployment again after it refused the key (401/403): the next one answers', async () => {
    const { caller, route } = setup();
    const { called, result } = run(caller, route('bad', 'good'), async (c) =>
      c.deployment.id === 'bad/m' ? Promise.reject(refusedKey()) : ok,
    );
    await expect(result).resolves.toMatchObject({ candidate: { deployment: { id: 'good/m' } } });
    expect(called).toEqual(['bad/m', 'good/m']);
  });

  it("gives the refused deployment's planned calls to the model's other deployments", async () => {
    const { caller, route } = setup();
    let flakyCalls = 0;
    const { called, result } = run(caller, route('bad', 'flaky'), async (c) => {
      if (c.deployment.id === 'bad/m') throw refusedKey();
      if (flakyCalls++ === 0) throw serverError();
      return ok;
    });
    await expect(result).resolves.toMatchObject({ candidate: { deployment: { id: 'flaky/m' } } });
    // The plan was bad, flaky, bad: the second call to bad went to flaky instead.
    expect(called).toEqual(['bad/m', 'flaky/m', 'flaky/m']);
  });

  it('a single deployment whose key is refused is called once, not 1 + retries times', async () => {
    const { caller, route } = setup();
    const { called, result } = run(caller, route('bad'), () => Promise.reject(refusedKey()));
    await expect(result).rejects.toMatchObject({ code: 'upstream_auth_failed', status: 502 });
    expect(called).toEqual(['bad/m']);
  });

  it('a 500 is still retried on the same deployment when it is the only one', async () => {
    const { caller, route } = setup();
    const { called, result } = run(caller, route('flaky'), () => Promise.reject(serverError()));
    await expect(result).rejects.toBeInstanceOf(GatewayException);
    expect(called).toEqual(['flaky/m', 'flaky/m', 'flaky/m']);
  });

  it('a refused key opens the circuit at once; a 500 counts towards it', async () => {
    const { caller, circuits, route } = setup();
    await run(caller, route('bad', 'good'), async (c) =>
      c.deployment.id === 'bad/m' ? Promise.reject(refusedKey()) : ok,
    ).result;
    expect(circuits.describe('bad/m')).toMatchObject({
      state: 'open',
      consecutiveFailures: 1,
      lastError: 'upstream_auth_failed',
      lastErrorMessage: 'Incorrect API key provided: [redacted]',
    });
    await run(caller, route('flaky', 'good'), async (c) =>
      c.deployment.id === 'flaky/m' ? Promise.reject(serverError()) : ok,
    ).result;
    expect(circuits.describe('flaky/m')).toMatchObject({ state: 'closed', consecutiveFailures: 1 });
  });

  it("tells the operator: error with the vendor's scrubbed words for the deployment's own fault, warn for a failure", async () => {
    const { caller, lines, route } = setup();
    await run(caller, route('bad', 'flaky', 'good'), async (c) =>
      c.deployment.id === 'bad/m'
        ? Promise.reject(refusedKey())
        : c.deployment.id === 'flaky/m'
          ? Promise.reject(serverError())
          : ok,
    ).result;
    const refused = lines.find((l) => l.deployment === 'bad/m')!;
    expect(refused).toMatchObject({
      level: 50,
      error: 'upstream_auth_failed',
      upstreamStatus: 401,
      reason: 'Incorrect API key provided: [redacted]',
    });
    expect(JSON.stringify(lines)).not.toMatch(/abcdefgh|wxyz1234/);
    expect(lines.find((l) => l.deployment === 'flaky/m')).toMatchObject({
      level: 40,
      error: 'upstream_error',
      msg: expect.stringContaining('boom'),
    });
  });

  it('plans around deployments known to be down, and calls them anyway when nothing else can answer', () => {
    const { caller, route } = setup({ down: 'the local model cannot load: no file' });
    expect(caller.plan(route('down', 'up')).map((c) => c.deployment.id)).toEqual(['up/m', 'up/m', 'up/m']);
    expect(caller.plan(route('down')).map((c) => c.deployment.id)).toEqual(['down/m', 'down/m', 'down/m']);
  });

  it('least-busy tries the deployment with the fewest requests in flight first; ties keep their order', () => {
    const { caller, routeBy } = setup({}, { inFlight: { a: 5, b: 0, c: 2, d: 2 } });
    expect(caller.plan(routeBy('least-busy', 'a', 'b', 'c')).map((c) => c.deployment.id)).toEqual([
      'b/m',
      'c/m',
      'a/m',
    ]);
    expect(caller.plan(routeBy('least-busy', 'd', 'c', 'a')).map((c) => c.deployment.id)).toEqual([
      'd/m',
      'c/m',
      'a/m',
    ]);
  });

  it('priority keeps the configured priority order, whatever is in flight', () => {
    const { caller, routeBy } = setup({}, { inFlight: { a: 5, b: 0 } });
    const plan = caller.plan(routeBy('priority', 'a', 'b'));
    expect(plan.map((c) => c.deployment.id)).toEqual(['a/m', 'b/m', 'a/m']);
  });

  it('a Retry-After above the cap waits only the cap before the deployment is called again', async () => {
    const { caller, route } = setup({}, { maxRetryAfterMs: 20 });
    const limited = route('limited');
    limited.fallbacks = [route('backup')];
    const hourLong = () =>
      mapUpstreamError({
        backendId: 'limited',
        status: 429,
        message: 'slow down',
        headers: { 'retry-after': '3600' },
        secrets: [],
      });
    // Uncapped, this would wait an hour before its second call; capped, 2 x 20 ms. The request gives up after 5 s
    // (a bound that holds on a loaded machine), so an uncapped wait fails the test instead of hanging it.
    const { called, result } = run(
      caller,
      limited,
      async (c) => (c.deployment.id === 'limited/m' ? Promise.reject(hourLong()) : ok),
      AbortSignal.timeout(5000),
    );
    await expect(result).resolves.toMatchObject({ candidate: { deployment: { id: 'backup/m' } } });
    expect(called).toEqual(['limited/m', 'limited/m', 'limited/m', 'backup/m']);
  });

  it('a Retry-After above the cap with nothing else to call ends the request at once with the 429', async () => {
    const { caller, route } = setup({}, { maxRetryAfterMs: 20 });
    const { called, result } = run(caller, route('limited'), () =>
      Promise.reject(
        mapUpstreamError({
          backendId: 'limited',
          status: 429,
          message: 'slow down',
          headers: { 'retry-after': '3600' },
          secrets: [],
        }),
      ),
    );
    await expect(result).rejects.toMatchObject({
      code: 'rate_limit_exceeded',
      headers: { 'retry-after': '3600' },
    });
    expect(called).toEqual(['limited/m']);
  });
});
