import { createServer } from 'node:net';
import OpenAI from 'openai';
import { AnthropicUpstream } from '../support/anthropic-upstream';
import { eventually } from '../support/eventually';
import { freePort } from '../support/free-port';
import { inFlight } from '../support/load';
import { OpenAIUpstream } from '../support/openai-upstream';
import { startTestGateway, type TestGateway } from '../support/test-gateway';
import { waitForUsageRecord, waitForUsageSummary } from '../support/usage';

const ask = (model: string, content = 'hello there') => ({
  model,
  messages: [{ role: 'user' as const, content }],
});

/** Models served by several deployments: retries, failover, fallbacks, circuit breaking, weights. */
describe('resilient routing', () => {
  let first: OpenAIUpstream;
  let second: OpenAIUpstream;
  let anthropic: AnthropicUpstream;
  let gw: TestGateway;
  let token: string;
  let client: OpenAI;

  const on = (backend: string, upstreamModel: string, extra: Record<string, number> = {}) => ({
    backend,
    upstreamModel,
    ...extra,
  });
  const calls = (upstream: OpenAIUpstream, model: string) =>
    upstream.requests.filter((r) => r.body.model === model).length;
  /** A client on a team of the test's own, so the one usage record it waits for is its request's. */
  const clientOf = async (team: string) => gw.openai((await gw.teamToken(team)).token);

  beforeAll(async () => {
    [first, second, anthropic] = await Promise.all([
      new OpenAIUpstream().start(),
      new OpenAIUpstream().start(),
      new AnthropicUpstream().start(),
    ]);
    first.retryAfter = '0';
    // `down` listens while the gateway starts (its start-up probe finds it up), then stops: a connection refused at
    // request time. (A backend already unreachable at start-up is never called: see backend-health.e2e.spec.ts.)
    const downPort = await freePort();
    const vanishing = createServer((socket) => socket.destroy());
    await new Promise<void>((resolve) => vanishing.listen(downPort, '127.0.0.1', resolve));
    gw = await startTestGateway({
      upstreamUrl: first.url,
      config: {
        routing: {
          retries: { attempts: 2, backoffMs: 5, maxRetryAfterMs: 500 },
          circuit: { failures: 2, cooldownMs: 600 },
        },
        backends: {
          first: { type: 'openai', baseUrl: first.url, apiKey: '${TEST_UPSTREAM_KEY}' },
          // A short first-byte timeout on a backend of its own: on `first` it would also cut the 800
          // requests of the weights test on a loaded machine (retried elsewhere, they skew the split).
          'first-hangs': {
            type: 'openai',
            baseUrl: first.url,
            apiKey: '${TEST_UPSTREAM_KEY}',
            timeouts: { firstByteMs: 300 },
          },
          second: { type: 'openai', baseUrl: second.url, apiKey: '${TEST_UPSTREAM_KEY}' },
          // The same stand-in under other names: deployments, and so circuits, of their own. A circuit is per
          // deployment (backend/upstream model), so two tests failing the same upstream model through one backend
          // would see each other's failures, and the result would depend on the order they run in.
          'first-again': { type: 'openai', baseUrl: first.url, apiKey: '${TEST_UPSTREAM_KEY}' },
          'first-streams': { type: 'openai', baseUrl: first.url, apiKey: '${TEST_UPSTREAM_KEY}' },
          'first-restricted': { type: 'openai', baseUrl: first.url, apiKey: '${TEST_UPSTREAM_KEY}' },
          down: { type: 'openai', baseUrl: `http://127.0.0.1:${downPort}/v1` },
          claude: { type: 'anthropic', baseUrl: anthropic.url, apiKey: '${TEST_UPSTREAM_KEY}' },
        },
        models: {
          failover: { deployments: [on('first', 'status-500'), on('second', 'echo', { priority: 1 })] },
          'failover-streamed': {
            deployments: [on('first-streams', 'status-500'), on('second', 'echo', { priority: 1 })],
          },
          'failover-429': { deployments: [on('first', 'status-429'), on('second', 'echo', { priority: 1 })] },
          'refused-first': { deployments: [on('down', 'x'), on('second', 'echo', { priority: 1 })] },
          'hangs-first': {
            deployments: [on('first-hangs', 'hang-headers'), on('second', 'echo', { priority: 1 })],
          },
          'client-mistake': {
            deployments: [on('first', 'status-400'), on('second', 'echo', { priority: 1 })],
          },
          'all-down': { deployments: [on('first', 'status-503'), on('second', 'status-503')] },
          primary: {
            deployments: [on('first', 'status-502'), on('second', 'status-502', { priority: 1 })],
            fallbacks: ['backup'],
          },
          backup: { backend: 'second', upstreamModel: 'echo' },
          restricted: { deployments: [on('first-restricted', 'status-503')], fallbacks: ['backup'] },
          circuit: { routing: 'priority', deployments: [on('first', 'toggle'), on('second', 'echo')] },
          'circuit-seen': {
            routing: 'priority',
            deployments: [on('first-again', 'toggle'), on('second', 'echo')],
          },
          weighted: {
            deployments: [on('first', 'echo', { weight: 3 }), on('second', 'echo', { weight: 1 })],
          },
          flaky: { deployments: [on('first', 'flaky-30'), on('second', 'echo')] },
          'claude-thinks': {
            backend: 'claude',
            upstreamModel: 'claude-overloaded',
            thinking: 'native',
            fallbacks: ['o-reasoner'],
          },
          'o-reasoner': { backend: 'second', upstreamModel: 'echo', thinking: 'reasoning_effort' },
          'total-limited': { backend: 'second', upstreamModel: 'slow', timeouts: { totalMs: 250 } },
          'total-limited-hang': { backend: 'second', upstreamModel: 'hang', timeouts: { totalMs: 250 } },
          'first-byte-limited': {
            backend: 'second',
            upstreamModel: 'hang-headers',
            timeouts: { firstByteMs: 150 },
          },
        },
      },
    });
    await new Promise((resolve) => vanishing.close(resolve));
    ({ token } = await gw.teamToken('routers'));
    client = gw.openai(token);
  });
  afterAll(async () => {
    await gw.close();
    await Promise.all([first.stop(), second.stop(), anthropic.stop()]);
  });
  // The two circuit tests break `first`'s toggle deployment; whatever happens, the next test finds it working.
  afterEach(() => {
    first.failing = false;
  });
  const circuitOf = async (deployment: string) => {
    const { body } = await gw.admin('GET', '/admin/v1/deployments');
    return body.data.find((d: any) => d.deployment === deployment).circuit;
  };

  it.each([
    ['failover', 'a 500'],
    ['failover-429', 'a 429 with Retry-After'],
    ['refused-first', 'a refused connection'],
    ['hangs-first', 'a deployment that sends no headers within firstByteMs'],
  ])(
    '%s: after %s the next deployment answers, with headers saying so, and one usage record',
    async (model) => {
      const own = await clientOf(`routers-${model}`);
      const { data, response } = await own.chat.completions.create(ask(model)).withResponse();
      expect(data.choices[0].message.content).toBe('echo: hello there');
      expect(data.model).toBe(model);
      expect(response.headers.get('x-switchyard-backend')).toBe('second');
      expect(response.headers.get('x-switchyard-model')).toBe(model);
      expect(response.headers.get('x-switchyard-attempts')).toBe('2');
      const record = await waitForUsageRecord(gw, `routers-${model}`);
      expect(record).toMatchObject({
        model,
        served_model: model,
        backend: 'second',
        upstream_model: 'echo',
        attempts: 2,
        outcome: 'ok',
        prompt_tokens: 2,
        completion_tokens: 3,
      });
    },
  );

  it('streams fail over too, before the first byte', async () => {
    const stream = await client.chat.completions.create({
      ...ask('failover-streamed'),
      stream: true,
      stream_options: { include_usage: true },
    });
    let text = '';
    let usage: any;
    for await (const chunk of stream) {
      text += chunk.choices[0]?.delta.content ?? '';
      usage = chunk.usage ?? usage;
    }
    expect(text).toBe('echo: hello there');
    expect(usage).toMatchObject({ prompt_tokens: 2, completion_tokens: 3 });
  });

  it("the client's own mistake (a 400) is not retried on another deployment", async () => {
    const before = calls(second, 'echo');
    const error = await client.chat.completions.create(ask('client-mistake')).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(OpenAI.BadRequestError);
    expect(calls(second, 'echo')).toBe(before);
  });

  it('when every deployment fails, the last error comes back saying how many were tried', async () => {
    const error = (await (
      await clientOf('routers-all-down')
    ).chat.completions
      .create(ask('all-down'))
      .catch((e: unknown) => e)) as InstanceType<typeof OpenAI.APIError>;
    expect(error.status).toBe(503);
    expect(error.code).toBe('upstream_unavailable');
    expect(error.message).toMatch(/3 attempts on 2 deployments/);
    expect(await waitForUsageRecord(gw, 'routers-all-down')).toMatchObject({
      model: 'all-down',
      attempts: 3,
      outcome: 'error',
    });
  });

  it('a fallback model answers when every deployment of the one asked for failed', async () => {
    const own = await clientOf('routers-primary');
    const { data, response } = await own.chat.completions.create(ask('primary')).withResponse();
    expect(data.choices[0].message.content).toBe('echo: hello there');
    expect(data.model).toBe('primary');
    expect(response.headers.get('x-switchyard-model')).toBe('backup');
    expect(await waitForUsageRecord(gw, 'routers-primary')).toMatchObject({
      model: 'primary',
      served_model: 'backup',
      backend: 'second',
      attempts: 4,
      outcome: 'ok',
    });
  });

  it("a fallback the caller's team may not use is skipped", async () => {
    const { token: narrow } = await gw.teamToken('narrow-router', ['restricted']);
    const error = (await gw
      .openai(narrow)
      .chat.completions.create(ask('restricted', 'a fallback out of reach'))
      .catch((e: unknown) => e)) as InstanceType<typeof OpenAI.APIError>;
    expect(error.status).toBe(503);
    // Its own deployment was called twice (its circuit, failures: 2, opened after the second, so no third), its
    // fallback (`backup`, on the second stand-in) never.
    expect(error.message).toMatch(/2 attempts on 1 deployment/);
    expect(first.calls({ model: 'status-503', containing: 'a fallback out of reach' })).toBe(2);
    expect(second.calls({ containing: 'a fallback out of reach' })).toBe(0);
    expect(await waitForUsageRecord(gw, 'narrow-router')).toMatchObject({
      model: 'restricted',
      served_model: 'restricted',
      backend: 'first-restricted',
      attempts: 2,
      outcome: 'error',
    });
  });

  it('a thinking request falling back from an Anthropic model to an OpenAI reasoning model carries the budget as reasoning_effort', async () => {
    const { response } = await gw
      .openai(token)
      .chat.completions.create({
        ...ask('claude-thinks'),
        max_tokens: 8000,
        thinking: { type: 'enabled', budget_tokens: 2048 },
      } as any)
      .withResponse();
    expect(response.headers.get('x-switchyard-model')).toBe('o-reasoner');
    const sent = second.requests[second.requests.length - 1].body;
    expect(sent).toMatchObject({ model: 'echo', reasoning_effort: 'low', max_completion_tokens: 8000 });
    expect(sent.thinking).toBeUndefined();
  });

  it('the circuit opens after failures in a row, skips the deployment, probes it after the cool-down, and closes when it recovers', async () => {
    // `first` also serves `circuit-seen`'s toggle (through `first-again`): count this test's calls only.
    const before = calls(first, 'toggle');
    first.failing = true;
    for (let i = 0; i < 2; i++)
      expect((await client.chat.completions.create(ask('circuit'))).choices[0].message.content).toBe(
        'echo: hello there',
      );
    expect(calls(first, 'toggle') - before).toBe(2);
    // Open: the dead deployment is not called at all.
    for (let i = 0; i < 3; i++) await client.chat.completions.create(ask('circuit'));
    expect(calls(first, 'toggle') - before).toBe(2);
    // Recovered; after the cool-down one probe reaches it, succeeds, and it takes the traffic again (priority 0).
    first.failing = false;
    // After the cool-down (600 ms here) the circuit is half-open: the next request is its probe.
    await eventually(async () => expect((await circuitOf('first/toggle')).state).toBe('half-open'), 5000);
    const { response } = await client.chat.completions.create(ask('circuit')).withResponse();
    expect(response.headers.get('x-switchyard-backend')).toBe('first');
    expect(
      (await client.chat.completions.create(ask('circuit')).withResponse()).response.headers.get(
        'x-switchyard-backend',
      ),
    ).toBe('first');
  });

  it('admins see each deployment and its circuit; metrics count attempts per deployment and the circuit state', async () => {
    first.failing = true;
    for (let i = 0; i < 2; i++) await client.chat.completions.create(ask('circuit-seen'));
    const { body } = await gw.admin('GET', '/admin/v1/deployments');
    const toggle = body.data.find((d: any) => d.deployment === 'first-again/toggle');
    expect(toggle).toMatchObject({
      model: 'circuit-seen',
      backend: 'first-again',
      upstream_model: 'toggle',
      circuit: { state: 'open', consecutiveFailures: 2, lastError: 'upstream_error' },
    });
    expect(
      body.data.find((d: any) => d.deployment === 'second/echo' && d.model === 'circuit-seen').circuit.state,
    ).toBe('closed');
    const metrics = await (await fetch(`${gw.url}/metrics`)).text();
    expect(metrics).toMatch(/switchyard_circuit_state\{deployment="first-again\/toggle"\} 2/);
    expect(metrics).toMatch(
      // Its own deployment, called only by this test: one failed attempt per request.
      /switchyard_upstream_attempts_total\{deployment="first-again\/toggle",outcome="upstream_error"\} 2\n/,
    );
    expect(metrics).toMatch(/switchyard_retries_total\{model="circuit-seen"\} \d+/);
  });

  it("a model's own first-byte timeout overrides its backend's: 504 upstream_timeout after the retries, not 300 s", async () => {
    const started = Date.now();
    const error = (await client.chat.completions
      .create(ask('first-byte-limited'))
      .catch((e: unknown) => e)) as InstanceType<typeof OpenAI.APIError>;
    expect(error.status).toBe(504);
    expect(error.code).toBe('upstream_timeout');
    expect(Date.now() - started).toBeLessThan(5000);
    // Two calls: the circuit (failures: 2 in this config) opened after the second, so there was no third.
    expect(error.message).toMatch(/2 attempts on 1 deployment/);
  });

  it('timeouts.totalMs ends a stream that runs too long with an in-band upstream_timeout, and a plain call with a 504', async () => {
    const stream = await client.chat.completions.create({
      ...ask('total-limited', 'a b c d e f g h i j k l'),
      stream: true,
    });
    let text = '';
    const error = await (async () => {
      for await (const chunk of stream) text += chunk.choices[0]?.delta.content ?? '';
    })().catch((e: unknown) => e);
    expect(error).toBeInstanceOf(OpenAI.APIError);
    expect((error as InstanceType<typeof OpenAI.APIError>).error).toMatchObject({
      code: 'upstream_timeout',
      type: 'server_error',
    });
    // Cut: a non-empty strict prefix of the whole answer.
    const whole = 'echo: a b c d e f g h i j k l';
    expect(text.length).toBeGreaterThan(0);
    expect(text.length).toBeLessThan(whole.length);
    expect(whole.startsWith(text)).toBe(true);
    const plain = (await client.chat.completions
      .create(ask('total-limited-hang'))
      .catch((e: unknown) => e)) as InstanceType<typeof OpenAI.APIError>;
    expect(plain.status).toBe(504);
    expect(plain.message).toMatch(/did not finish within 250 ms/);
  });

  it('weights hold: 3:1 across 800 requests is 75% +- 5%', async () => {
    const before = calls(first, 'echo');
    const answers = await inFlight(800, 64, () =>
      client.chat.completions.create(ask('weighted')).withResponse(),
    );
    const onFirst = answers.filter((a) => a.response.headers.get('x-switchyard-backend') === 'first').length;
    expect(onFirst / 800).toBeGreaterThan(0.7);
    expect(onFirst / 800).toBeLessThan(0.8);
    expect(calls(first, 'echo') - before).toBe(onFirst);
  });

  it('a fault mix: one of two deployments fails 30% of requests at random; >= 99.9% of 1,000 requests succeed, each billed once', async () => {
    const { token: mixToken } = await gw.teamToken('fault-mix');
    const mix = gw.openai(mixToken);
    const results = await inFlight(1000, 64, () =>
      mix.chat.completions.create(ask('flaky')).then(
        () => 'ok',
        (e: unknown) =>
          e instanceof OpenAI.APIError ? `${e.status} ${e.code ?? ''}: ${e.message}` : String(e),
      ),
    );
    const failures = results.filter((r) => r !== 'ok');
    // At most one of 1,000 may fail (>= 99.9 %); more, and the answers they got are the failure's message.
    expect(failures.length <= 1 ? [] : failures).toEqual([]);
    const { total: usage } = await waitForUsageSummary(gw, 'team=fault-mix', 1000, { timeoutMs: 10_000 });
    // Billed once per request, for the attempt that answered: 2 prompt + 3 completion tokens each.
    expect(usage.prompt_tokens).toBe(2 * usage.requests_ok);
    expect(usage.completion_tokens).toBe(3 * usage.requests_ok);
  }, 120_000);
});
