import { callThrough } from '../support/upstream-caller-fakes';
import { GatewayException } from '../../src/core/errors/gateway.exception';
import { AppLogger } from '../../src/common/logging/logger';
import { buildConfig } from '../support/config';
import { InFlightTracker } from '../../src/lifecycle/in-flight.tracker';
import { MetricsService } from '../../src/metrics/metrics.service';
import type { Backend } from '../../src/providers/provider-adapter';
import type { UpstreamResponse } from '../../src/providers/upstream-client';
import { mapUpstreamError } from '../../src/providers/upstream-errors';
import { BackendHealth } from '../../src/routing/backend-health';
import { CircuitBreakers } from '../../src/routing/circuit-breakers';
import type { Deployment, Route } from '../../src/routing/model-router.service';
import { UpstreamCaller, type Candidate } from '../../src/gateway/upstream-caller';

/** The routing seam against in-memory backends: which deployments a request calls, and what the operator is told. */
function setup(
  backendFaults: Record<string, string | undefined> = {},
  options: {
    inFlight?: Record<string, number>;
    maxRetryAfterMs?: number;
    /** Backends whose calls cost nothing when cancelled (a local model): started before the admission. */
    cancelsAtNoCost?: string[];
    weights?: Record<string, number>;
    totalMs?: number;
  } = {},
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
          cancelsAtNoCost: options.cancelsAtNoCost?.includes(id),
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
    priority: 0,
  });
  const routeBy = (routing: string, ...ids: string[]): Route => {
    const deployments = ids.map(deployment);
    return {
      model: 'model',
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
  return { caller, circuits, lines, route, routeBy, metrics };
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
    exclude: (candidate: Candidate) => string | undefined = () => undefined,
  ) => {
    const called: string[] = [];
    const calls = caller.calls(route, signal);
    for (const candidate of calls.plan) {
      const reason = exclude(candidate);
      if (reason !== undefined) calls.exclude(candidate, reason);
    }
    const result = callThrough(calls, (candidate) => {
      called.push(candidate.deployment.id);
      return answer(candidate);
    });
    return { called, result, calls };
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

  it('a client mistake (400) or an unexpected error is not retried at all', async () => {
    const { caller, route } = setup();
    const mistake = mapUpstreamError({
      backendId: 'a',
      status: 400,
      message: 'no',
      headers: {},
      secrets: [],
    });
    const first = run(caller, route('a', 'b'), () => Promise.reject(mistake));
    await expect(first.result).rejects.toBe(mistake);
    expect(first.called).toEqual(['a/m']);
    const bug = new TypeError('not a gateway error');
    const second = run(caller, route('a', 'b'), () => Promise.reject(bug));
    await expect(second.result).rejects.toBe(bug);
    expect(second.called).toEqual(['a/m']);
  });

  it('an aborted request is not retried', async () => {
    const { caller, route } = setup();
    const controller = new AbortController();
    const { called, result } = run(
      caller,
      route('a', 'b'),
      () => {
        controller.abort();
        return Promise.reject(serverError());
      },
      controller.signal,
    );
    await expect(result).rejects.toMatchObject({ code: 'upstream_error' });
    expect(called).toEqual(['a/m']);
  });

  it('a deployment whose connections are all busy (at capacity) is not called again: waiting cannot help', async () => {
    const { caller, route } = setup();
    const busy = () =>
      new GatewayException('upstream_busy', 'every connection is busy', { atCapacity: true });
    const { called, result } = run(caller, route('full'), () => Promise.reject(busy()));
    await expect(result).rejects.toMatchObject({ code: 'upstream_busy' });
    expect(called).toEqual(['full/m']);
    // Another deployment can help: plan full, other, full; `other` answers.
    const second = run(caller, route('full', 'other'), async (c) =>
      c.deployment.id === 'full/m' ? Promise.reject(busy()) : ok,
    );
    await expect(second.result).resolves.toMatchObject({ candidate: { deployment: { id: 'other/m' } } });
    expect(second.called).toEqual(['full/m', 'other/m']);
  });

  it('when every call failed, the error says how many calls on how many deployments; one call keeps its own words', async () => {
    const { caller, route } = setup();
    const many = run(caller, route('a', 'b'), () => Promise.reject(serverError()));
    await expect(many.result).rejects.toMatchObject({
      code: 'upstream_error',
      status: 502,
      message: 'Backend "x" failed with HTTP 500: boom (3 attempts on 2 deployments).',
    });
    const one = run(caller, route('bad'), () => Promise.reject(refusedKey()));
    await expect(one.result).rejects.toMatchObject({
      message: 'Backend "bad" rejected the gateway\'s credentials.',
    });
  });

  it('counts a request that needed more than one call once in switchyard_retries_total, and each attempt', async () => {
    const { caller, route, metrics } = setup();
    let calls = 0;
    await run(caller, route('a', 'b'), async () => {
      if (calls++ === 0) throw serverError();
      return ok;
    }).result;
    await run(caller, route('a'), async () => ok).result;
    const text = await metrics.registry.metrics();
    expect(text).toContain('switchyard_retries_total{model="model"} 1');
    expect(text).toMatch(
      /switchyard_upstream_attempts_total\{deployment="a\/m",outcome="upstream_error"\} 1/,
    );
  });

  it('skips a candidate whose rules the request breaks, saying why once, and tries the next', async () => {
    const { caller, route } = setup();
    const { result, calls, called } = run(
      caller,
      route('picky', 'easy'),
      async () => ok,
      undefined,
      (c) => (c.deployment.id === 'picky/m' ? 'no tools here' : undefined),
    );
    expect((await result).candidate.deployment.id).toBe('easy/m');
    expect(called).toEqual(['easy/m']);
    expect(calls.attempts).toMatchObject([
      { kind: 'skipped', model: 'model', deployment: { id: 'picky/m' }, reason: 'no tools here' },
      { kind: 'call', model: 'model', deployment: { id: 'easy/m' }, outcome: 'ok' },
    ]);
    expect(calls.calls).toBe(1);
  });

  it('with every candidate skipped, the request fails naming each reason', async () => {
    const { caller, route } = setup();
    const { result, called } = run(
      caller,
      route('picky'),
      async () => ok,
      undefined,
      () => 'no tools here',
    );
    await expect(result).rejects.toMatchObject({
      code: 'upstream_unavailable',
      message: 'No deployment could take the request (model on picky/m: no tools here).',
    });
    expect(called).toEqual([]);
  });

  it('never retries after the first byte: once a call answered, the sequence hands out nothing more', async () => {
    const { caller, route } = setup();
    const { result, calls } = run(caller, route('a', 'b'), async () => ok);
    await result;
    expect(calls.next()).toBeUndefined();
  });

  it('says which deployment was called last and how many calls were made, when none answered', async () => {
    const { caller, route } = setup();
    const { result, calls } = run(caller, route('a', 'b'), () => Promise.reject(serverError()));
    await expect(result).rejects.toBeInstanceOf(GatewayException);
    expect(calls.calls).toBe(3);
    expect(calls.lastCalled?.id).toBe('a/m');
  });

  it('weighted order: a deployment of weight 0 is only ever tried last', () => {
    const { caller, routeBy } = setup({}, { weights: { never: 0, a: 1, b: 3 } });
    for (const random of [0, 0.3, 0.99]) {
      jest.spyOn(Math, 'random').mockReturnValue(random);
      const order = caller.plan(routeBy('weighted', 'never', 'a', 'b')).map((c) => c.deployment.id);
      expect(order[2]).toBe('never/m');
      jest.restoreAllMocks();
    }
    // Weights 1 and 3: a draw below 1/4 of the total picks `a` first, above it `b`.
    jest.spyOn(Math, 'random').mockReturnValue(0.2);
    expect(caller.plan(routeBy('weighted', 'a', 'b')).map((c) => c.deployment.id)).toEqual([
      'a/m',
      'b/m',
      'a/m',
    ]);
    jest.spyOn(Math, 'random').mockReturnValue(0.3);
    expect(caller.plan(routeBy('weighted', 'a', 'b')).map((c) => c.deployment.id)).toEqual([
      'b/m',
      'a/m',
      'b/m',
    ]);
    jest.restoreAllMocks();
  });

  describe('deadline (timeouts.totalMs)', () => {
    it('aborts the call with a 504 upstream_timeout once the model total time is up', async () => {
      const { caller, route } = setup({}, { totalMs: 20 });
      const request = new AbortController();
      const { signal, clear } = caller.deadline(route('a'), request.signal);
      await new Promise((resolve) => signal.addEventListener('abort', resolve, { once: true }));
      expect(signal.reason).toMatchObject({
        code: 'upstream_timeout',
        status: 504,
        message: 'The model `model` did not finish within 20 ms (timeouts.totalMs).',
      });
      expect(request.signal.aborted).toBe(false);
      clear();
    });

    it("follows the request's own abort, and a cleared deadline never fires", async () => {
      const { caller, route } = setup({}, { totalMs: 20 });
      const request = new AbortController();
      const { signal } = caller.deadline(route('a'), request.signal);
      request.abort(new Error('client left'));
      expect(signal.aborted).toBe(true);
      expect((signal.reason as Error).message).toBe('client left');
      const other = caller.deadline(route('a'), new AbortController().signal);
      other.clear();
      await new Promise((resolve) => setTimeout(resolve, 60));
      expect(other.signal.aborted).toBe(false);
    });

    it('no totalMs: the request signal as it is', () => {
      const { caller, route } = setup();
      const request = new AbortController();
      expect(caller.deadline(route('a'), request.signal).signal).toBe(request.signal);
    });
  });

  it.each([
    ['upstream_unreachable'],
    ['upstream_timeout'],
    ['upstream_unavailable'],
    ['upstream_error'],
    ['upstream_busy'],
    ['rate_limit_exceeded'],
  ] as const)('%s is worth another call: the next deployment answers', async (code) => {
    const { caller, route } = setup();
    const { called, result } = run(caller, route('a', 'b'), async (c) =>
      c.deployment.id === 'a/m' ? Promise.reject(new GatewayException(code, 'failed')) : ok,
    );
    await expect(result).resolves.toMatchObject({ candidate: { deployment: { id: 'b/m' } } });
    expect(called).toEqual(['a/m', 'b/m']);
  });
});
