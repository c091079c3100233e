import OpenAI from 'openai';
import { BACKENDS, type Backend } from '../../src/providers/provider-adapter';
import { InflightLeases } from '../../src/usage/inflight-leases';
import { eventually } from '../support/eventually';
import { run, waitForListening, writeConfig } from '../support/gateway-process';
import { OpenAIUpstream } from '../support/openai-upstream';
import { REDIS_URL, startTestGateway, type TestGateway } from '../support/test-gateway';
import { waitForUsageRecords } from '../support/usage';

/**
 * A stream that holds its request open until `end`. The SDK's Stream must stay referenced meanwhile: a fetch
 * Response that becomes garbage with its body unread has that body cancelled by undici (a FinalizationRegistry),
 * which closes the connection, so the gateway sees the client leave and frees the request's slots at the next
 * collection (seen under load: the backend's two connections were free again before the third request).
 */
const hangingStream = async (client: OpenAI) => {
  const stream = await client.chat.completions.create({
    model: 'hang',
    stream: true,
    messages: [{ role: 'user', content: 'wait' }],
  });
  return { end: () => stream.controller.abort() };
};

/** One team cannot take a backend's capacity from everyone else, and no request waits without bound for it. */
describe('backend capacity and per-team concurrency', () => {
  let upstream: OpenAIUpstream;
  let gw: TestGateway;

  beforeAll(async () => {
    upstream = await new OpenAIUpstream().start();
    gw = await startTestGateway({
      upstreamUrl: upstream.url,
      config: { backends: { standin: { maxConnections: 2, timeouts: { connectionWaitMs: 300 } } } },
    });
  });
  afterAll(async () => {
    await gw.close();
    await upstream.stop();
  });

  it('with every connection to a backend held by streams, a new request gets 503 upstream_busy with Retry-After, not a silent queue', async () => {
    const hog = gw.openai((await gw.teamToken('hog')).token);
    const other = gw.openai((await gw.teamToken('bystander')).token);
    const streams = await Promise.all([hangingStream(hog), hangingStream(hog)]);
    // Both streams hold their connection (a stream's headers reach the client only once the backend's have come).
    const standin = (gw.gateway.app.get(BACKENDS) as Map<string, Backend>).get('standin')!.client;
    expect(standin.inFlight!()).toBe(2);

    const started = Date.now();
    const refused = await other.chat.completions
      .create({ model: 'echo', messages: [{ role: 'user', content: 'hi' }] })
      .catch((e: unknown) => e);
    expect(Date.now() - started).toBeLessThan(3000);
    expect(refused).toBeInstanceOf(OpenAI.InternalServerError);
    expect((refused as InstanceType<typeof OpenAI.APIError>).status).toBe(503);
    expect((refused as InstanceType<typeof OpenAI.APIError>).code).toBe('upstream_busy');
    expect((refused as InstanceType<typeof OpenAI.APIError>).headers?.get('retry-after')).toBe('1');

    // A stream ending frees its connection for the next request: polled on the backend's count of connections in
    // use (a read), then the request is sent once.
    expect(standin.inFlight!()).toBe(2);
    streams[0].end();
    await eventually(() => expect(standin.inFlight!()).toBe(1));
    const served = await other.chat.completions.create({
      model: 'echo',
      messages: [{ role: 'user', content: 'hi' }],
    });
    expect(served.choices[0].message.content).toBe('echo: hi');
    streams[1].end();
  });

  it('a team with concurrentRequests gets 429 past it, and its slot back when a request ends', async () => {
    await gw.admin('POST', '/admin/v1/teams', { id: 'narrow', limits: { concurrentRequests: 1 } });
    const token = (await gw.admin('POST', '/admin/v1/teams/narrow/tokens', {})).body.token;
    const client = gw.openai(token);
    const held = await hangingStream(client);
    const refused = await gw.asTeam(token, 'POST', '/v1/chat/completions', {
      model: 'echo',
      messages: [{ role: 'user', content: 'x' }],
    });
    expect(refused.status).toBe(429);
    expect(refused.body.error.code).toBe('rate_limit_exceeded');
    expect(refused.body.error.message).toBe(
      'concurrentRequests limit of team "narrow" reached (1/1 requests in flight); retry when one ends.',
    );
    // The slot is the request's lease in the team's concurrency set: polled until it is gone, then asked once.
    const slots = `${gw.prefix}conc:{narrow}:team`;
    expect(await gw.redis.zcard(slots)).toBe(1);
    held.end();
    // (1.3-1.8 s after the abort on a loaded 2-core machine, so more patience than eventually's default 3 s.)
    await eventually(async () => expect(await gw.redis.zcard(slots)).toBe(0), 10_000);
    const again = await gw.asTeam(token, 'POST', '/v1/chat/completions', {
      model: 'echo',
      messages: [{ role: 'user', content: 'x' }],
    });
    expect(again.status).toBe(200);
  });
});

/** A second replica in its own process, on the same Redis prefix as an in-process one, with 1-second leases. */
function secondReplica(upstreamUrl: string, prefix: string) {
  const config = writeConfig(`
server: { port: 0, host: 127.0.0.1 }
redis: { url: "${REDIS_URL}", keyPrefix: "${prefix}" }
admin: { apiKey: "\${ADMIN}" }
usage: { leaseSeconds: 1 }
backends:
  standin: { type: openai, baseUrl: "${upstreamUrl}", apiKey: upstream-secret-key }
models:
  slow: { backend: standin, upstreamModel: slow }
`);
  return run(config, { ADMIN: 'adm' });
}

/** A replica killed with streams open: a survivor records each of them, and their concurrency leases expire. */
describe('a replica killed mid-stream', () => {
  it('SIGKILL with 20 open streams: the survivor writes 20 records (reservation, estimated, replica_lost) within a bounded time', async () => {
    const upstream = await new OpenAIUpstream().start();
    upstream.delayMs = 400;
    const survivor = await startTestGateway({
      upstreamUrl: upstream.url,
      config: { usage: { leaseSeconds: 1 } },
    });
    const doomed = secondReplica(upstream.url, survivor.prefix);
    try {
      const url = await waitForListening(doomed.output);
      await survivor.admin('POST', '/admin/v1/teams', {
        id: 'crashers',
        limits: { tokensPerDay: 1_000_000, concurrentRequests: 20 },
      });
      const token = (await survivor.admin('POST', '/admin/v1/teams/crashers/tokens', {})).body.token;
      const client = new OpenAI({ apiKey: token, baseURL: `${url}/v1`, maxRetries: 0 });
      const words = Array.from({ length: 40 }, (_, i) => `w${i}`).join(' ');
      const streams = await Promise.all(
        Array.from({ length: 20 }, () =>
          client.chat.completions.create({
            model: 'slow',
            stream: true,
            max_tokens: 50,
            messages: [{ role: 'user', content: words }],
          }),
        ),
      );
      // Each has relayed part of its answer.
      await Promise.all(streams.map(async (s) => (await s[Symbol.asyncIterator]().next()).value));
      doomed.child.kill('SIGKILL');
      await doomed.exit;

      const records = await waitForUsageRecords(survivor, 'crashers', 20, {
        timeoutMs: 15_000,
        everyMs: 100,
      });
      for (const record of records) {
        expect(record).toMatchObject({
          model: 'slow',
          outcome: 'error',
          error_code: 'replica_lost',
          estimated: true,
          stream: true,
          completion_tokens: 50,
        });
        expect(record.prompt_tokens).toBeGreaterThan(40);
      }
      // The survivor counts the estimates in its metrics only once the requests' own records have had 10 leases
      // to replace them (a killed replica never sends them): then once, with what the records say.
      const lost = async (series: string) =>
        (await (await fetch(`${survivor.url}/metrics`)).text())
          .split('\n')
          .filter((line) => line.startsWith(`${series}{team="crashers"`) && line.includes('model="slow"'))
          .reduce((sum, line) => sum + Number(line.slice(line.lastIndexOf(' ') + 1)), 0);
      expect(await lost('switchyard_requests_total')).toBe(0);
      // The 20 concurrency leases expired with the replica: the team can use its 20 slots again (on the survivor).
      const again = await survivor.asTeam(token, 'POST', '/v1/chat/completions', {
        model: 'echo',
        messages: [{ role: 'user', content: 'x' }],
      });
      expect(again.status).toBe(200);
      await waitForUsageRecords(survivor, 'crashers', 21);
      // Swept once: nothing is left in flight, and a second sweep (run here, not waited for) writes no record twice.
      expect(await survivor.gateway.app.get(InflightLeases).sweep()).toBe(0);
      expect(
        (await survivor.admin('GET', '/admin/v1/usage/records?team=crashers&limit=100')).body.data,
      ).toHaveLength(21);
      expect(await survivor.redis.hlen(`${survivor.prefix}inflight:{crashers}`)).toBe(0);
      // The dead replica, with nothing left to settle, is forgotten: only the survivor is listed.
      await eventually(
        async () => expect(await survivor.redis.smembers(`${survivor.prefix}replicas`)).toHaveLength(1),
        10_000,
        100,
      );
      await eventually(async () => expect(await lost('switchyard_requests_total')).toBe(20), 20_000, 200);
      expect(await lost('switchyard_tokens_total')).toBe(
        records.reduce((sum, record) => sum + record.total_tokens, 0),
      );
    } finally {
      doomed.child.kill('SIGKILL');
      await survivor.close();
      await upstream.stop();
    }
  });
});

describe('a live replica serving a request longer than its lease', () => {
  it('keeps the request: the other replica sweeps meanwhile and settles nothing, and the one record is the real one', async () => {
    const upstream = await new OpenAIUpstream().start();
    upstream.delayMs = 300;
    const sweeper = await startTestGateway({
      upstreamUrl: upstream.url,
      config: { usage: { leaseSeconds: 1 } },
    });
    const serving = secondReplica(upstream.url, sweeper.prefix);
    try {
      const url = await waitForListening(serving.output);
      await sweeper.admin('POST', '/admin/v1/teams', { id: 'longhaul', limits: { tokensPerDay: 1_000_000 } });
      const token = (await sweeper.admin('POST', '/admin/v1/teams/longhaul/tokens', {})).body.token;
      const client = new OpenAI({ apiKey: token, baseURL: `${url}/v1`, maxRetries: 0 });
      const started = Date.now();
      const stream = await client.chat.completions.create({
        model: 'slow',
        stream: true,
        max_tokens: 12,
        messages: [
          { role: 'user', content: 'one two three four five six seven eight nine ten eleven twelve' },
        ],
      });
      let text = '';
      for await (const chunk of stream) text += chunk.choices[0]?.delta?.content ?? '';
      // Several leases long (1 s each), so the sweeper has looked at its entry more than once.
      expect(Date.now() - started).toBeGreaterThan(3000);
      const records = await waitForUsageRecords(sweeper, 'longhaul', 1, { timeoutMs: 10_000, everyMs: 100 });
      expect(records[0]).toMatchObject({ model: 'slow', outcome: 'ok', estimated: false });
      expect(records[0].error_code ?? '').toBe('');
      expect(records[0].completion_tokens).toBe(text.trim().split(/\s+/).length);
      expect(await sweeper.redis.hlen(`${sweeper.prefix}inflight:{longhaul}`)).toBe(0);
    } finally {
      serving.child.kill('SIGKILL');
      await sweeper.close();
      await upstream.stop();
    }
  });
});
