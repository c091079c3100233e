import { GatewayException } from '../../src/core/errors/gateway.exception';
import { mapUpstreamError } from '../../src/providers/upstream-errors';
import { callerWithFakes, okResponse as ok } from '../support/upstream-caller-fakes';

/** The routing seam against in-memory backends (test/support/upstream-caller-fakes.ts): which deployments a
 *  request calls, and what the operator is told. */

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
  it('never calls a deployment again after it refused the key (401/403): the next one answers', async () => {
    const { route, run } = callerWithFakes();
    const { called, result } = run(route('bad', 'good'), async (c) =>
      c.deployment.id === 'bad/m' ? Promise.reject(refusedKey()) : ok,
    );
    await expect(result).resolves.toMatchObject({ candidate: { deployment: { id: 'good/m' } } });
    expect(called).toEqual(['bad/m', 'good/m']);
  });

  it("gives the refused deployment's planned calls to the model's other deployments", async () => {
    const { route, run } = callerWithFakes();
    let flakyCalls = 0;
    const { called, result } = run(route('bad', 'flaky'), async (c) => {
      if (c.deployment.id === 'bad/m') throw refusedKey();
      if (flakyCalls++ === 0) throw serverError();
      return ok;
    });
    await expect(result).resolves.toMatchObject({ candidate: { deployment: { id: 'flaky/m' } } });
    // The plan was bad, flaky, bad: the second call to bad went to flaky instead.
    expect(called).toEqual(['bad/m', 'flaky/m', 'flaky/m']);
  });

  it('a single deployment whose key is refused is called once, not 1 + retries times', async () => {
    const { route, run } = callerWithFakes();
    const { called, result } = run(route('bad'), () => Promise.reject(refusedKey()));
    await expect(result).rejects.toMatchObject({ code: 'upstream_auth_failed', status: 502 });
    expect(called).toEqual(['bad/m']);
  });

  it('a 500 is still retried on the same deployment when it is the only one', async () => {
    const { route, run } = callerWithFakes();
    const { called, result } = run(route('flaky'), () => Promise.reject(serverError()));
    await expect(result).rejects.toBeInstanceOf(GatewayException);
    expect(called).toEqual(['flaky/m', 'flaky/m', 'flaky/m']);
  });

  it('a refused key opens the circuit at once; a 500 counts towards it', async () => {
    const { circuits, route, run } = callerWithFakes();
    await run(route('bad', 'good'), async (c) =>
      c.deployment.id === 'bad/m' ? Promise.reject(refusedKey()) : ok,
    ).result;
    expect(circuits.describe('bad/m')).toMatchObject({
      state: 'open',
      consecutiveFailures: 1,
      lastError: 'upstream_auth_failed',
      lastErrorMessage: 'Incorrect API key provided: [redacted]',
    });
    await run(route('flaky', 'good'), async (c) =>
      c.deployment.id === 'flaky/m' ? Promise.reject(serverError()) : ok,
    ).result;
    expect(circuits.describe('flaky/m')).toMatchObject({ state: 'closed', consecutiveFailures: 1 });
  });

  it("tells the operator: error with the vendor's scrubbed words for the deployment's own fault, warn for a failure", async () => {
    const { lines, route, run } = callerWithFakes();
    await run(route('bad', 'flaky', 'good'), async (c) =>
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
    const { caller, route } = callerWithFakes({ down: { down: 'the local model cannot load: no file' } });
    expect(caller.plan(route('down', 'up')).map((c) => c.deployment.id)).toEqual(['up/m', 'up/m', 'up/m']);
    expect(caller.plan(route('down')).map((c) => c.deployment.id)).toEqual(['down/m', 'down/m', 'down/m']);
  });

  it('least-busy tries the deployment with the fewest requests in flight first; ties keep their order', () => {
    const { caller, routeBy } = callerWithFakes({ inFlight: { a: 5, b: 0, c: 2, d: 2 } });
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
    const { caller, routeBy } = callerWithFakes({ inFlight: { a: 5, b: 0 } });
    const plan = caller.plan(routeBy('priority', 'a', 'b'));
    expect(plan.map((c) => c.deployment.id)).toEqual(['a/m', 'b/m', 'a/m']);
  });

  it('a Retry-After above the cap waits only the cap before the deployment is called again', async () => {
    const { route, run } = callerWithFakes({ maxRetryAfterMs: 20 });
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
      limited,
      async (c) => (c.deployment.id === 'limited/m' ? Promise.reject(hourLong()) : ok),
      { signal: AbortSignal.timeout(5000) },
    );
    await expect(result).resolves.toMatchObject({ candidate: { deployment: { id: 'backup/m' } } });
    expect(called).toEqual(['limited/m', 'limited/m', 'limited/m', 'backup/m']);
  });

  it('a Retry-After above the cap with nothing else to call ends the request at once with the 429', async () => {
    const { route, run } = callerWithFakes({ maxRetryAfterMs: 20 });
    const { called, result } = run(route('limited'), () =>
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
    const { route, run } = callerWithFakes();
    const mistake = mapUpstreamError({
      backendId: 'a',
      status: 400,
      message: 'no',
      headers: {},
      secrets: [],
    });
    const first = run(route('a', 'b'), () => Promise.reject(mistake));
    await expect(first.result).rejects.toBe(mistake);
    expect(first.called).toEqual(['a/m']);
    const bug = new TypeError('not a gateway error');
    const second = run(route('a', 'b'), () => Promise.reject(bug));
    await expect(second.result).rejects.toBe(bug);
    expect(second.called).toEqual(['a/m']);
  });

  it('an aborted request is not retried', async () => {
    const { route, run } = callerWithFakes();
    const controller = new AbortController();
    const { called, result } = run(
      route('a', 'b'),
      () => {
        controller.abort();
        return Promise.reject(serverError());
      },
      { signal: controller.signal },
    );
    await expect(result).rejects.toMatchObject({ code: 'upstream_error' });
    expect(called).toEqual(['a/m']);
  });

  it('a deployment whose connections are all busy (at capacity) is not called again: waiting cannot help', async () => {
    const { route, run } = callerWithFakes();
    const busy = () =>
      new GatewayException('upstream_busy', 'every connection is busy', { atCapacity: true });
    const { called, result } = run(route('full'), () => Promise.reject(busy()));
    await expect(result).rejects.toMatchObject({ code: 'upstream_busy' });
    expect(called).toEqual(['full/m']);
    // Another deployment can help: plan full, other, full; `other` answers.
    const second = run(route('full', 'other'), async (c) =>
      c.deployment.id === 'full/m' ? Promise.reject(busy()) : ok,
    );
    await expect(second.result).resolves.toMatchObject({ candidate: { deployment: { id: 'other/m' } } });
    expect(second.called).toEqual(['full/m', 'other/m']);
  });

  it('when every call failed, the error says how many calls on how many deployments; one call keeps its own words', async () => {
    const { route, run } = callerWithFakes();
    const many = run(route('a', 'b'), () => Promise.reject(serverError()));
    await expect(many.result).rejects.toMatchObject({
      code: 'upstream_error',
      status: 502,
      message: 'Backend "x" failed with HTTP 500: boom (3 attempts on 2 deployments).',
    });
    const one = run(route('bad'), () => Promise.reject(refusedKey()));
    await expect(one.result).rejects.toMatchObject({
      message: 'Backend "bad" rejected the gateway\'s credentials.',
    });
  });

  it('counts a request that needed more than one call once in switchyard_retries_total, and each attempt', async () => {
    const { metrics, route, run } = callerWithFakes();
    let calls = 0;
    await run(route('a', 'b'), async () => {
      if (calls++ === 0) throw serverError();
      return ok;
    }).result;
    await run(route('a', 'b'), async () => ok).result; // the same model, answered by its first call
    const text = await metrics.registry.metrics();
    expect(text).toContain('switchyard_retries_total{model="model-a-b"} 1');
    expect(text).toMatch(
      /switchyard_upstream_attempts_total\{deployment="a\/m",outcome="upstream_error"\} 1/,
    );
  });

  it('skips a candidate whose rules the request breaks, saying why once, and tries the next', async () => {
    const { route, run } = callerWithFakes();
    const { result, calls, called } = run(route('picky', 'easy'), async () => ok, {
      exclude: (c) => (c.deployment.id === 'picky/m' ? 'no tools here' : undefined),
    });
    expect((await result).candidate.deployment.id).toBe('easy/m');
    expect(called).toEqual(['easy/m']);
    expect(calls.attempts).toMatchObject([
      { kind: 'skipped', model: 'model-picky-easy', deployment: { id: 'picky/m' }, reason: 'no tools here' },
      { kind: 'call', model: 'model-picky-easy', deployment: { id: 'easy/m' }, outcome: 'ok' },
    ]);
    expect(calls.calls).toBe(1);
  });

  it('with every candidate skipped, the request fails naming each reason', async () => {
    const { route, run } = callerWithFakes();
    const { result, called } = run(route('picky'), async () => ok, { exclude: () => 'no tools here' });
    await expect(result).rejects.toMatchObject({
      code: 'upstream_unavailable',
      message: 'No deployment could take the request (model-picky on picky/m: no tools here).',
    });
    expect(called).toEqual([]);
  });

  it('never retries after the first byte: once a call answered, the sequence hands out nothing more', async () => {
    const { route, run } = callerWithFakes();
    const { result, calls } = run(route('a', 'b'), async () => ok);
    await result;
    expect(calls.next()).toBeUndefined();
  });

  it('says which deployment was called last and how many calls were made, when none answered', async () => {
    const { route, run } = callerWithFakes();
    const { result, calls } = run(route('a', 'b'), () => Promise.reject(serverError()));
    await expect(result).rejects.toBeInstanceOf(GatewayException);
    expect(calls.calls).toBe(3);
    expect(calls.lastCalled?.id).toBe('a/m');
  });

  it('weighted order: a deployment of weight 0 is only ever tried last', () => {
    const { caller, routeBy } = callerWithFakes({ weights: { never: 0, a: 1, b: 3 } });
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
      const { caller, route } = callerWithFakes({ totalMs: 20 });
      const request = new AbortController();
      const { signal, clear } = caller.deadline(route('a'), request.signal);
      await new Promise((resolve) => signal.addEventListener('abort', resolve, { once: true }));
      expect(signal.reason).toMatchObject({
        code: 'upstream_timeout',
        status: 504,
        message: 'The model `model-a` did not finish within 20 ms (timeouts.totalMs).',
      });
      expect(request.signal.aborted).toBe(false);
      clear();
    });

    it("follows the request's own abort, and a cleared deadline never fires", async () => {
      const { caller, route } = callerWithFakes({ totalMs: 20 });
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
      const { caller, route } = callerWithFakes();
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
    const { route, run } = callerWithFakes();
    const { called, result } = run(route('a', 'b'), async (c) =>
      c.deployment.id === 'a/m' ? Promise.reject(new GatewayException(code, 'failed')) : ok,
    );
    await expect(result).resolves.toMatchObject({ candidate: { deployment: { id: 'b/m' } } });
    expect(called).toEqual(['a/m', 'b/m']);
  });
});
