import { GatewayException } from '../../src/core/errors/gateway.exception';
import { mapUpstreamError } from '../../src/providers/upstream-errors';
import { requestAbortSignal } from '../../src/common/http/request-abort';
import { callerWithFakes, deploymentsOf, okResponse as ok } from '../support/upstream-caller-fakes';

/**
 * Retry planning through UpstreamCaller's public API (plan, calls, deadline) on in-memory backends: each request's
 * CallSequence is driven as the pipeline drives it (test/support/upstream-caller-fakes.ts). The waits between calls
 * are recorded instead of slept (node:timers/promises is replaced for this file), so the backoff and Retry-After
 * arithmetic is asserted exactly, with no timing bound.
 */
const mockWaits: number[] = [];
jest.mock('node:timers/promises', () => ({
  setTimeout: (ms: number) => {
    mockWaits.push(ms);
    return Promise.resolve();
  },
}));
const waits = mockWaits;
beforeEach(() => {
  waits.length = 0;
});
afterEach(() => jest.restoreAllMocks());

const rateLimited = (headers: Record<string, string>) =>
  new GatewayException('rate_limit_exceeded', 'slow down', { headers });
const serverError = () =>
  mapUpstreamError({ backendId: 'x', status: 500, message: 'boom', headers: {}, secrets: [] });

describe('waits before calling a deployment again', () => {
  it('exponential backoff with jitter: backoffMs x 2^(deployments tried - 1) x (0.5 + random)', async () => {
    const { route, run } = callerWithFakes({ attempts: 3, backoffMs: 100 });
    jest.spyOn(Math, 'random').mockReturnValue(0.25);
    const { called, result } = run(route('a', 'b'), () => Promise.reject(serverError()));
    await expect(result).rejects.toMatchObject({ code: 'upstream_error' });
    expect(called).toEqual(['a/m', 'b/m', 'a/m', 'b/m']);
    // The first call to each deployment does not wait; each later one waits 100 x 2^(2-1) x 0.75 = 150 ms.
    expect(waits).toEqual([150, 150]);
  });

  it('backoff for a single deployment: 100 x 2^0 x (0.5 + 0.9) = 140 ms before each retry', async () => {
    const { route, run } = callerWithFakes({ attempts: 2, backoffMs: 100 });
    jest.spyOn(Math, 'random').mockReturnValue(0.9);
    const { called, result } = run(route('a'), () => Promise.reject(serverError()));
    await expect(result).rejects.toMatchObject({ code: 'upstream_error' });
    expect(called).toEqual(['a/m', 'a/m', 'a/m']);
    expect(waits).toEqual([140, 140]);
  });

  it('Retry-After in seconds is waited as given, below the cap', async () => {
    const { route, run } = callerWithFakes({ attempts: 1, maxRetryAfterMs: 5000 });
    let calls = 0;
    const { called, result } = run(route('a'), async () => {
      if (calls++ === 0) throw rateLimited({ 'retry-after': '2' });
      return ok;
    });
    await expect(result).resolves.toMatchObject({ candidate: { deployment: { id: 'a/m' } } });
    expect(called).toEqual(['a/m', 'a/m']);
    expect(waits).toEqual([2000]);
  });

  it('retry-after-ms wins over retry-after', async () => {
    const { route, run } = callerWithFakes({ attempts: 1, maxRetryAfterMs: 5000 });
    let calls = 0;
    await run(route('a'), async () => {
      if (calls++ === 0) throw rateLimited({ 'retry-after-ms': '1500', 'retry-after': '4' });
      return ok;
    }).result;
    expect(waits).toEqual([1500]);
  });

  it('a negative or unreadable Retry-After is ignored: backoff instead', async () => {
    const { route, run } = callerWithFakes({ attempts: 2, backoffMs: 100, maxRetryAfterMs: 5000 });
    jest.spyOn(Math, 'random').mockReturnValue(0.5);
    const errors = [
      rateLimited({ 'retry-after-ms': '-5', 'retry-after': '-1' }),
      rateLimited({ 'retry-after': 'soon' }),
    ];
    let calls = 0;
    await run(route('a'), async () => {
      const error = errors[calls++];
      if (error) throw error;
      return ok;
    }).result;
    expect(waits).toEqual([100, 100]);
  });

  it('Retry-After 0 (in ms or in seconds) means call again at once', async () => {
    const { route, run } = callerWithFakes({ attempts: 2, backoffMs: 100, maxRetryAfterMs: 5000 });
    const errors = [rateLimited({ 'retry-after-ms': '0' }), rateLimited({ 'retry-after': '0' })];
    let calls = 0;
    await run(route('a'), async () => {
      const error = errors[calls++];
      if (error) throw error;
      return ok;
    }).result;
    expect(waits).toEqual([0, 0]);
  });

  it('a Retry-After exactly at the cap is waited; one past it, with nowhere else to go, ends the request with the 429', async () => {
    const atCap = callerWithFakes({ attempts: 1, maxRetryAfterMs: 3000 });
    let calls = 0;
    const first = atCap.run(atCap.route('a'), async () => {
      if (calls++ === 0) throw rateLimited({ 'retry-after-ms': '3000' });
      return ok;
    });
    await expect(first.result).resolves.toMatchObject({ response: ok });
    expect(first.called).toEqual(['a/m', 'a/m']);
    expect(waits).toEqual([3000]);

    waits.length = 0;
    const past = callerWithFakes({ attempts: 1, maxRetryAfterMs: 3000 });
    const second = past.run(past.route('a'), () => Promise.reject(rateLimited({ 'retry-after-ms': '3001' })));
    // The client gets the backend's 429 with its Retry-After, at once: no wait, no second call.
    await expect(second.result).rejects.toMatchObject({
      code: 'rate_limit_exceeded',
      status: 429,
      headers: { 'retry-after-ms': '3001' },
    });
    expect(second.called).toEqual(['a/m']);
    expect(waits).toEqual([]);
  });

  it('a Retry-After above the cap waits only the cap before the deployment is called again', async () => {
    const { route, run } = callerWithFakes({ attempts: 2, maxRetryAfterMs: 20 });
    const limited = route('limited');
    limited.fallbacks = [route('backup')];
    const { called, result } = run(limited, async (c) =>
      c.deployment.id === 'limited/m' ? Promise.reject(rateLimited({ 'retry-after': '3600' })) : ok,
    );
    await expect(result).resolves.toMatchObject({ candidate: { deployment: { id: 'backup/m' } } });
    // The fallback not yet tried keeps the request going; each call to `limited` again waits the cap, not an hour.
    expect(called).toEqual(['limited/m', 'limited/m', 'limited/m', 'backup/m']);
    expect(waits).toEqual([20, 20]);
  });

  it('a Retry-After past the cap still lets a deployment not yet tried be called', async () => {
    const { route, run } = callerWithFakes({ attempts: 2, maxRetryAfterMs: 3000 });
    const { called, result } = run(route('a', 'b'), (c) =>
      Promise.reject(rateLimited({ 'retry-after': c.deployment.id === 'a/m' ? '3600' : '1' })),
    );
    await expect(result).rejects.toMatchObject({ code: 'rate_limit_exceeded' });
    // Plan a, b, a: b is tried (no wait); the third call is a again, after b's own 1 s.
    expect(called).toEqual(['a/m', 'b/m', 'a/m']);
    expect(waits).toEqual([1000]);
  });
});

describe('plan', () => {
  it('the model asked for, then each fallback, each 1 + retries calls, fallbacks flagged', () => {
    const { caller, route } = callerWithFakes({ attempts: 1 });
    const primary = route('a', 'b');
    const fallback = route('c');
    primary.fallbacks = [fallback];
    const plan = caller.plan(primary);
    expect(plan.map((c) => [c.deployment.id, c.routed === fallback, c.fallback])).toEqual([
      ['a/m', false, false],
      ['b/m', false, false],
      ['c/m', true, true],
      ['c/m', true, true],
    ]);
  });

  it('a model whose deployments are all down is left out when a fallback can answer', () => {
    const { caller, route } = callerWithFakes({ attempts: 1, down: { a: 'unreachable' } });
    const primary = route('a');
    primary.fallbacks = [route('c')];
    expect(deploymentsOf(caller.plan(primary))).toEqual(['c/m', 'c/m']);
  });

  it('everything down, fallbacks included: one call to the first deployment, as a probe', () => {
    const { caller, route } = callerWithFakes({ attempts: 2, down: { a: 'x', b: 'y', c: 'z' } });
    const primary = route('a', 'b');
    primary.fallbacks = [route('c')];
    const plan = caller.plan(primary);
    expect(plan.map((c) => [c.deployment.id, c.fallback])).toEqual([['a/m', false]]);
  });

  it('priority tiers come first in every strategy; least-busy and weighted order only within a tier', () => {
    const { caller, routeBy } = callerWithFakes({
      attempts: 3,
      priorities: { low: 1, high: 0, mid: 1 },
      inFlight: { high: 9, low: 5, mid: 0 },
    });
    expect(deploymentsOf(caller.plan(routeBy('least-busy', 'low', 'high', 'mid')))).toEqual([
      'high/m',
      'mid/m',
      'low/m',
      'high/m',
    ]);
    expect(deploymentsOf(caller.plan(routeBy('priority', 'low', 'high', 'mid')))).toEqual([
      'high/m',
      'low/m',
      'mid/m',
      'high/m',
    ]);
    jest.spyOn(Math, 'random').mockReturnValue(0.99);
    expect(deploymentsOf(caller.plan(routeBy('weighted', 'low', 'high', 'mid'))).slice(0, 3)).toEqual([
      'high/m',
      'mid/m',
      'low/m',
    ]);
  });

  it('weighted: with every weight 0 the order is as configured', () => {
    const { caller, routeBy } = callerWithFakes({ attempts: 1, weights: { a: 0, b: 0 } });
    jest.spyOn(Math, 'random').mockReturnValue(0.5);
    expect(deploymentsOf(caller.plan(routeBy('weighted', 'a', 'b')))).toEqual(['a/m', 'b/m']);
  });
});

describe('calls', () => {
  it('a deployment whose circuit is open and that nothing else can replace gets the first call only, as a probe', async () => {
    const { circuits, route, run } = callerWithFakes({ attempts: 2 });
    circuits.failure('a/m', 'upstream_error', { openNow: true });
    const { called, result } = run(route('a'), () => Promise.reject(serverError()));
    await expect(result).rejects.toMatchObject({ code: 'upstream_error' });
    // The plan is a, a, a (nothing else can answer); the circuit stays open, so only the first call is made.
    expect(called).toEqual(['a/m']);
  });

  it('a half-open circuit lets one probe through; a failed probe opens it again', async () => {
    let now = 1_000_000;
    jest.spyOn(Date, 'now').mockImplementation(() => now);
    const { circuits, route, run } = callerWithFakes({ attempts: 2, circuitCooldownMs: 1000 });
    circuits.failure('b/m', 'upstream_error', { openNow: true });
    now += 1000;
    expect(circuits.state('b/m')).toBe('half-open');
    const { called, calls, result } = run(route('a', 'b'), () => Promise.reject(serverError()));
    expect(deploymentsOf(calls.plan)).toEqual(['a/m', 'b/m', 'a/m']);
    await expect(result).rejects.toMatchObject({ code: 'upstream_error' });
    expect(called).toEqual(['a/m', 'b/m', 'a/m']);
    expect(circuits.state('b/m')).toBe('open');
  });

  it('a deployment taken out mid-request (its circuit opened by another request) is not called again', async () => {
    const { circuits, route, run } = callerWithFakes({ attempts: 2 });
    const { called, calls, result } = run(route('a', 'b'), (c) => {
      if (c.deployment.id === 'a/m') circuits.failure('b/m', 'upstream_error', { openNow: true });
      return Promise.reject(serverError());
    });
    expect(deploymentsOf(calls.plan)).toEqual(['a/m', 'b/m', 'a/m']);
    await expect(result).rejects.toMatchObject({ code: 'upstream_error' });
    expect(called).toEqual(['a/m', 'a/m']);
  });

  it('the error after every call failed: attempts, deployments and what was skipped, in the words of the last error', async () => {
    const { route, run } = callerWithFakes({ attempts: 1 });
    const { calls, result } = run(route('skip', 'a'), () => Promise.reject(serverError()), {
      exclude: (c) => (c.deployment.id === 'skip/m' ? 'no images' : undefined),
    });
    await expect(result).rejects.toMatchObject({
      code: 'upstream_error',
      status: 502,
      message:
        'Backend "x" failed with HTTP 500: boom (1 attempt on 1 deployment; skipped model-skip-a on skip/m: no images).',
    });
    expect(calls.attempts).toMatchObject([
      { kind: 'skipped', model: 'model-skip-a', deployment: { id: 'skip/m' }, reason: 'no images' },
      { kind: 'call', model: 'model-skip-a', deployment: { id: 'a/m' }, outcome: 'upstream_error' },
    ]);
    expect(calls.attempts).toHaveLength(2);
  });

  it('two calls on one deployment say so; the error keeps its status, type, code and headers', async () => {
    const { route, run } = callerWithFakes({ attempts: 1, maxRetryAfterMs: 5000 });
    const { result } = run(route('a'), () =>
      Promise.reject(
        new GatewayException('rate_limit_exceeded', 'Backend "a" is rate limiting.', {
          headers: { 'retry-after': '1' },
          type: 'tokens',
          wireCode: 'rate_limit_exceeded',
        }),
      ),
    );
    await expect(result).rejects.toMatchObject({
      code: 'rate_limit_exceeded',
      status: 429,
      type: 'tokens',
      wireCode: 'rate_limit_exceeded',
      headers: { 'retry-after': '1' },
      message: 'Backend "a" is rate limiting (2 attempts on 1 deployment).',
    });
  });

  it("an error that is not the gateway's on a later call is thrown as it is", async () => {
    const { route, run } = callerWithFakes({ attempts: 2 });
    const bug = new TypeError('bug');
    let calls = 0;
    const { called, result } = run(route('a', 'b'), async () => {
      if (calls++ === 0) throw serverError();
      throw bug;
    });
    await expect(result).rejects.toBe(bug);
    expect(called).toEqual(['a/m', 'b/m']);
  });

  it('records every attempt with its outcome, a non-gateway error as internal_error', async () => {
    const { metrics, route, run } = callerWithFakes({ attempts: 1 });
    const { calls, result } = run(route('a'), () => Promise.reject(new Error('x')));
    await expect(result).rejects.toThrow('x');
    expect(calls.attempts).toMatchObject([
      { kind: 'call', model: 'model-a', deployment: { id: 'a/m' }, outcome: 'internal_error' },
    ]);
    expect(calls.attempts).toHaveLength(1);
    expect(await metrics.registry.metrics()).toMatch(
      /switchyard_upstream_attempts_total\{deployment="a\/m",outcome="internal_error"\} 1/,
    );
  });
});

describe('what the pipeline tells the exchange when no call answered (calls, lastCalled)', () => {
  it('counts calls only, not skipped candidates, and names the deployment called last', async () => {
    const { route, run } = callerWithFakes({ attempts: 3 });
    // Plan a, b, skip, a: the skipped candidate sits between calls.
    const { called, calls, result } = run(route('a', 'b', 'skip'), () => Promise.reject(serverError()), {
      exclude: (c) => (c.deployment.id === 'skip/m' ? 'no tools' : undefined),
    });
    await expect(result).rejects.toMatchObject({ code: 'upstream_error' });
    expect(called).toEqual(['a/m', 'b/m', 'a/m']);
    expect(calls.calls).toBe(3);
    expect(calls.lastCalled?.id).toBe('a/m');
  });

  it('a skipped candidate after the last call is not the one called last', async () => {
    const { route, run } = callerWithFakes({ attempts: 1 });
    // Plan b, skip: b is called, then skip is passed over.
    const { calls, result } = run(route('b', 'skip'), () => Promise.reject(serverError()), {
      exclude: (c) => (c.deployment.id === 'skip/m' ? 'no tools' : undefined),
    });
    await expect(result).rejects.toMatchObject({ code: 'upstream_error' });
    expect(calls.attempts.map((a) => a.kind)).toEqual(['call', 'skipped']);
    expect(calls.calls).toBe(1);
    expect(calls.lastCalled).toMatchObject({ id: 'b/m', backend: { id: 'b' }, upstreamModel: 'm' });
  });

  it('nothing called (every candidate skipped): no call, no deployment called last', async () => {
    const { route, run } = callerWithFakes({ attempts: 1 });
    const { called, calls, result } = run(route('a'), async () => ok, { exclude: () => 'no tools' });
    await expect(result).rejects.toMatchObject({ code: 'upstream_unavailable' });
    expect(called).toEqual([]);
    expect(calls.calls).toBe(0);
    expect(calls.lastCalled).toBeUndefined();
  });
});

describe("deadline on the request's own signal", () => {
  it('cuts the request signal itself with a 504 when totalMs is up', async () => {
    const { caller, route } = callerWithFakes({ totalMs: 10 });
    const res = { on: () => undefined } as never;
    const signal = requestAbortSignal({} as never, res, new AbortController().signal);
    const deadline = caller.deadline(route('a'), signal);
    expect(deadline.signal).toBe(signal);
    await new Promise((resolve) => signal.addEventListener('abort', resolve, { once: true }));
    expect(signal.reason).toMatchObject({
      code: 'upstream_timeout',
      status: 504,
      message: 'The model `model-a` did not finish within 10 ms (timeouts.totalMs).',
    });
    deadline.clear();
  });

  it('a cleared deadline never cuts the request signal', async () => {
    const { caller, route } = callerWithFakes({ totalMs: 10 });
    const signal = requestAbortSignal(
      {} as never,
      { on: () => undefined } as never,
      new AbortController().signal,
    );
    caller.deadline(route('a'), signal).clear();
    // A later timer than the deadline's: had the deadline's fired, the signal would be aborted by then.
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect(signal.aborted).toBe(false);
  });
});

describe('what the operator is told', () => {
  const refusedKey = () =>
    mapUpstreamError({ backendId: 'bad', status: 401, message: 'Invalid key', headers: {}, secrets: [] });

  it("a deployment's own fault: one error line with the request, model, deployment, backend and the vendor's words", async () => {
    const { lines, route, run } = callerWithFakes({ attempts: 0 });
    const { result } = run(route('bad'), () => Promise.reject(refusedKey()));
    await expect(result).rejects.toMatchObject({ code: 'upstream_auth_failed' });
    expect(lines.filter((l) => l.deployment === 'bad/m' && l.level === 50)).toEqual([
      expect.objectContaining({
        level: 50,
        requestId: 'req-1',
        model: 'model-bad',
        deployment: 'bad/m',
        backend: 'bad',
        error: 'upstream_auth_failed',
        upstreamStatus: 401,
        reason: 'Invalid key',
        msg: 'deployment bad/m cannot answer as configured: Backend "bad" rejected the gateway\'s credentials. (HTTP 401: Invalid key); it is not called again for this request',
      }),
    ]);
  });

  it('a failure without words from the upstream: a warn line whose reason is the error itself', async () => {
    const { lines, route, run } = callerWithFakes({ attempts: 0 });
    const { result } = run(route('a'), () =>
      Promise.reject(new GatewayException('upstream_unreachable', 'connect ECONNREFUSED')),
    );
    await expect(result).rejects.toMatchObject({ code: 'upstream_unreachable' });
    const line = lines.find((l) => l.deployment === 'a/m');
    expect(line).toMatchObject({
      level: 40,
      error: 'upstream_unreachable',
      reason: 'connect ECONNREFUSED',
      msg: 'deployment a/m failed: connect ECONNREFUSED',
    });
    expect(Object.keys(line ?? {})).toEqual(expect.not.arrayContaining(['upstreamStatus']));
  });

  it('a deployment-fault error without an upstream status says nothing of HTTP', async () => {
    const { lines, route, run } = callerWithFakes({ attempts: 0 });
    const fault = new GatewayException('upstream_error', 'Unknown model.', { deploymentFault: true });
    const { result } = run(route('a'), () => Promise.reject(fault));
    await expect(result).rejects.toBe(fault);
    expect(lines.find((l) => l.deployment === 'a/m')?.msg).toBe(
      'deployment a/m cannot answer as configured: Unknown model.; it is not called again for this request',
    );
  });

  it('refused credentials make the backend unusable in the readiness report until it answers again', async () => {
    const { health, route, run } = callerWithFakes({ attempts: 0 });
    const bad = route('bad');
    await expect(run(bad, () => Promise.reject(refusedKey())).result).rejects.toMatchObject({
      code: 'upstream_auth_failed',
    });
    expect(health.report(bad.deployments)).toEqual({
      bad: { usable: false, reason: "it refused the gateway's credentials: Invalid key" },
    });
    await run(bad, async () => ok).result;
    expect(health.report(bad.deployments)).toEqual({ bad: { usable: true } });
  });
});
