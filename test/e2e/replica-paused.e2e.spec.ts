import { randomBytes } from 'node:crypto';
import Redis from 'ioredis';
import OpenAI from 'openai';
import { windowOf } from '../../src/limits/limit-windows';
import { eventually, untilPast } from '../support/eventually';
import { run, waitForListening, writeConfig, type RunningProcess } from '../support/gateway-process';
import { OpenAIUpstream } from '../support/openai-upstream';
import { deletePrefix, REDIS_URL } from '../support/test-gateway';
import { adminApiAt, waitForUsageRecords } from '../support/usage';

const ADMIN = 'paused-admin-key';
const LEASE_SECONDS = 1;
/** Survivors count an estimate in their metrics after 10 leases (usage/inflight-leases.ts). */
const ESTIMATE_WAIT_MS = 10 * LEASE_SECONDS * 1000;

/** The sum of a metric's series for a team on one gateway (`match`: more label text a series must hold). */
async function metricSum(url: string, team: string, name: string, match = ''): Promise<number> {
  const text = await (await fetch(`${url}/metrics`)).text();
  return text
    .split('\n')
    .filter((line) => line.startsWith(`${name}{`) && line.includes(`team="${team}"`) && line.includes(match))
    .reduce((sum, line) => sum + Number(line.slice(line.lastIndexOf(' ') + 1)), 0);
}

/** What each request really uses: the stand-in counts 59 prompt words and answers 60 ("echo: w0 ... w58"). */
const CONTENT = Array.from({ length: 59 }, (_, i) => `w${i}`).join(' ');
const REAL = { prompt: 59, completion: 60, costNanos: (59 * 100 + 60 * 1000) * 1000 };
/** The completion allowance each request reserves (max_tokens): what a survivor's estimate bills. */
const RESERVED = 1024;

/**
 * A replica stopped (SIGSTOP) with 20 streams open, for longer than its lease: the other replica records them as
 * lost (replica_lost, what they reserved). Then it is resumed (SIGCONT) and the 20 streams finish for their
 * clients. Each request must end up recorded once, with its true counts and cost, everywhere: records, day
 * counters (usage API), the budget and token limit counters, and Prometheus summed over both replicas.
 */
describe('a paused replica resumed after a survivor recorded its requests as lost', () => {
  const prefix = `sy-test:${randomBytes(6).toString('hex')}:`;
  const redis = new Redis(REDIS_URL);
  let upstream: OpenAIUpstream;
  let survivor: RunningProcess;
  let paused: RunningProcess;
  let urls: { survivor: string; paused: string };

  beforeAll(async () => {
    upstream = await new OpenAIUpstream().start();
    upstream.delayMs = 100; // 60 words: each stream takes about 6 s
    const config = writeConfig(`
server: { port: 0, host: 127.0.0.1 }
redis: { url: "${REDIS_URL}", keyPrefix: "${prefix}" }
admin: { apiKey: "\${ADMIN}" }
usage: { leaseSeconds: ${LEASE_SECONDS} }
accessLog: false
backends:
  standin: { type: openai, baseUrl: "${upstream.url}", apiKey: upstream-secret-key }
models:
  slow-priced: { backend: standin, upstreamModel: slow, price: { input: 100, output: 1000 } }
`);
    [survivor, paused] = [run(config, { ADMIN }), run(config, { ADMIN })];
    urls = {
      survivor: await waitForListening(survivor.output),
      paused: await waitForListening(paused.output),
    };
  });
  afterAll(async () => {
    paused.child.kill('SIGCONT');
    for (const p of [survivor, paused]) p.child.kill('SIGKILL');
    await upstream.stop();
    await deletePrefix(redis, prefix);
    await redis.quit();
  });

  const admin = async (path: string, method = 'GET', body?: unknown) => {
    const res = await fetch(`${urls.survivor}${path}`, {
      method,
      headers: { authorization: `Bearer ${ADMIN}`, 'content-type': 'application/json' },
      body: body ? JSON.stringify(body) : undefined,
    });
    return (await res.json()) as any;
  };
  const records = async (team: string) =>
    (await admin(`/admin/v1/usage/records?team=${team}&limit=100`)).data as any[];

  /** 20 streams open on the replica to be paused, each past its first chunk; then SIGSTOP until the survivor has recorded them as lost. */
  async function pauseWithStreams(team: string) {
    await admin('/admin/v1/teams', 'POST', {
      id: team,
      limits: { tokensPerDay: 1_000_000, budgetPerDay: 100 },
    });
    const token = (await admin(`/admin/v1/teams/${team}/tokens`, 'POST', {})).token;
    const client = new OpenAI({ apiKey: token, baseURL: `${urls.paused}/v1`, maxRetries: 0 });
    const streams = await Promise.all(
      Array.from({ length: 20 }, () =>
        client.chat.completions.create({
          model: 'slow-priced',
          stream: true,
          stream_options: { include_usage: true },
          // More than the answer takes (60): the estimate bills the reservation, the real record what was used.
          max_tokens: RESERVED,
          messages: [{ role: 'user', content: CONTENT }],
        }),
      ),
    );
    const iterators = streams.map((stream) => stream[Symbol.asyncIterator]());
    await Promise.all(iterators.map((iterator) => iterator.next())); // each has started relaying
    paused.child.kill('SIGSTOP');
    const estimates = await waitForUsageRecords(adminApiAt(urls.survivor, ADMIN), team, 20, {
      timeoutMs: 20_000,
      everyMs: 100,
    });
    for (const record of estimates)
      expect(record).toMatchObject({
        outcome: 'error',
        status: 502,
        error_code: 'replica_lost',
        estimated: true,
        completion_tokens: RESERVED,
      });
    return { iterators, estimates, sweptAt: Date.now() };
  }

  /** SIGCONT, and every client reads its stream to the end: the whole answer, with its usage. */
  async function resumeAndFinish(iterators: Array<AsyncIterator<OpenAI.ChatCompletionChunk>>): Promise<void> {
    paused.child.kill('SIGCONT');
    const answers = await Promise.all(
      iterators.map(async (iterator) => {
        let text = '';
        let usage: OpenAI.CompletionUsage | undefined;
        for (let next = await iterator.next(); !next.done; next = await iterator.next()) {
          text += next.value.choices[0]?.delta?.content ?? '';
          usage = next.value.usage ?? usage;
        }
        return { text, usage };
      }),
    );
    for (const { text, usage } of answers) {
      expect(text).toBe(`echo: ${CONTENT}`);
      expect(usage).toMatchObject({
        prompt_tokens: REAL.prompt,
        completion_tokens: REAL.completion,
        total_tokens: REAL.prompt + REAL.completion,
      });
    }
  }

  /** Redis holds the true outcome of each request, once: its record (with the id the estimate had), the day counters, the limits. */
  async function exactInRedis(team: string, estimates: any[]): Promise<void> {
    const data = await records(team);
    expect(data).toHaveLength(20);
    expect(new Set(data.map((record) => record.id))).toEqual(new Set(estimates.map((record) => record.id)));
    for (const record of data) {
      expect(record).toMatchObject({
        outcome: 'ok',
        status: 200,
        error_code: null,
        estimated: false,
        prompt_tokens: REAL.prompt,
        completion_tokens: REAL.completion,
        total_tokens: 119,
        cost_nanos: REAL.costNanos,
      });
    }
    const { total } = await admin(`/admin/v1/usage?team=${team}`);
    expect(total).toEqual({
      requests: 20,
      requests_ok: 20,
      requests_error: 0,
      requests_aborted: 0,
      requests_rejected: 0,
      prompt_tokens: 20 * REAL.prompt,
      completion_tokens: 20 * REAL.completion,
      reasoning_tokens: 0,
      cached_tokens: 0,
      cache_write_tokens: 0,
      total_tokens: 20 * (REAL.prompt + REAL.completion),
      estimated_requests: 0,
      cost: (20 * REAL.costNanos) / 1e9,
      cost_nanos: 20 * REAL.costNanos,
      cost_unknown_requests: 0,
    });
    // The limits were settled from what was reserved to what was used, once.
    expect((await admin(`/admin/v1/teams/${team}/budget`)).budgets[0].spent).toBe(
      (20 * REAL.costNanos) / 1e9,
    );
    const tokensKey = `${prefix}rl:{${team}}:team:tokensPerDay:${windowOf('tokensPerDay', Date.now()).id}`;
    expect(Number(await redis.get(tokensKey))).toBe(20 * (REAL.prompt + REAL.completion));
    expect(await redis.hlen(`${prefix}inflight:{${team}}`)).toBe(0);
  }

  /** A metric summed over both replicas, as a dashboard sums them. */
  const both = async (team: string, name: string, match = '') =>
    (await metricSum(urls.survivor, team, name, match)) + (await metricSum(urls.paused, team, name, match));
  const replacedCount = async (metrics: string) =>
    Number(
      new RegExp(`switchyard_usage_estimates_replaced_total\\{metrics="${metrics}"\\} (\\d+)`).exec(
        await (await fetch(`${urls.paused}/metrics`)).text(),
      )?.[1] ?? 0,
    );

  it('the real outcome replaces the estimate: 20 records, counters, budget and metrics with the true counts, once', async () => {
    const team = 'paused';
    const { iterators, estimates, sweptAt } = await pauseWithStreams(team);
    // The survivor does not count them in its metrics yet: the request's own record may still replace them.
    expect(await metricSum(urls.survivor, team, 'switchyard_requests_total')).toBe(0);
    await resumeAndFinish(iterators);
    expect(Date.now() - sweptAt).toBeLessThan(ESTIMATE_WAIT_MS); // the case this test is for

    const exact = async () => {
      await exactInRedis(team, estimates);
      expect(await both(team, 'switchyard_requests_total')).toBe(20);
      expect(await both(team, 'switchyard_requests_total', 'outcome="ok"')).toBe(20);
      expect(await both(team, 'switchyard_tokens_total', 'type="prompt"')).toBe(20 * REAL.prompt);
      expect(await both(team, 'switchyard_tokens_total', 'type="completion"')).toBe(20 * REAL.completion);
      expect(await both(team, 'switchyard_cost_total')).toBeCloseTo((20 * REAL.costNanos) / 1e9, 9);
    };
    await eventually(exact, 10_000, 200);
    expect(await replacedCount('real')).toBe(20);

    // Past the survivor's wait, its sweeps find every estimate replaced and count none of them: still exact. A window
    // in which nothing may change (the survivor is another process: its sweep cannot be called from here), so the
    // test waits for the clock: the wait's end plus three sweeps (one a lease).
    await untilPast(sweptAt + ESTIMATE_WAIT_MS + 3 * LEASE_SECONDS * 1000);
    await exact();
    expect(survivor.output()).toContain('settling a request whose replica stopped renewing its lease');
    expect(paused.output()).toContain('its own record replaced the estimate');
  });

  it('resumed only after the survivor counted the estimates in its metrics: Redis gets the true outcome, the metrics keep the estimate, each once', async () => {
    const team = 'paused-long';
    const { iterators, estimates } = await pauseWithStreams(team);
    const estimated = {
      prompt: estimates.reduce((sum, record) => sum + record.prompt_tokens, 0),
      completion: 20 * RESERVED,
    };
    // The survivor counts them once their wait is over (the replica is still stopped).
    await eventually(
      async () =>
        expect(await metricSum(urls.survivor, team, 'switchyard_requests_total', 'status_code="502"')).toBe(
          20,
        ),
      ESTIMATE_WAIT_MS + 15_000,
      200,
    );
    await resumeAndFinish(iterators);

    await eventually(() => exactInRedis(team, estimates), 10_000, 200);
    await eventually(async () => expect(await replacedCount('estimate')).toBe(20), 5000, 100);
    // Prometheus counters cannot go down: they keep the estimates, counted once, and the resumed replica adds nothing.
    expect(await both(team, 'switchyard_requests_total')).toBe(20);
    expect(await both(team, 'switchyard_requests_total', 'outcome="error"')).toBe(20);
    expect(await both(team, 'switchyard_tokens_total', 'type="prompt"')).toBe(estimated.prompt);
    expect(await both(team, 'switchyard_tokens_total', 'type="completion"')).toBe(estimated.completion);
    expect(await metricSum(urls.paused, team, 'switchyard_requests_total')).toBe(0);
  });
});
