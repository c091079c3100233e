import { eventually } from '../support/eventually';
import { OpenAIUpstream } from '../support/openai-upstream';
import { PrivateRedis } from '../support/redis-server';
import { startTestGateway, type TestGateway } from '../support/test-gateway';
import { waitForUsageSummary } from '../support/usage';

/** A metric's value from the gateway's /metrics text. */
async function metric(gw: TestGateway, name: string): Promise<number> {
  const text = await (await fetch(`${gw.url}/metrics`)).text();
  const line = text.split('\n').find((l) => l.startsWith(`${name} `));
  return line ? Number(line.split(' ')[1]) : NaN;
}

const ask = (content: string) => ({ model: 'echo', messages: [{ role: 'user' as const, content }] });

describe('Redis stopped and restarted mid-run', () => {
  let upstream: OpenAIUpstream;
  let redis: PrivateRedis;
  let open: TestGateway;
  let closed: TestGateway;

  beforeAll(async () => {
    upstream = await new OpenAIUpstream().start();
    redis = new PrivateRedis();
    await redis.start();
    const base = { redis: { url: redis.url, commandTimeoutMs: 500 } };
    // One replica as the default (fail-open limits) with last-known auth; one strict.
    open = await startTestGateway({
      upstreamUrl: upstream.url,
      config: { ...base, auth: { onOutage: 'last-known' } },
    });
    closed = await startTestGateway({
      upstreamUrl: upstream.url,
      prefix: open.prefix,
      config: { redis: { ...base.redis, onOutage: 'fail-closed' }, auth: { onOutage: 'reject' } },
    });
  });
  afterAll(async () => {
    await open.gateway.shutdown(200);
    await closed.gateway.shutdown(200);
    await redis.stop();
    await upstream.stop();
    for (const gw of [open, closed]) gw.redis.disconnect();
  });

  it('keeps serving, buffers usage in memory, and writes every record once Redis is back', async () => {
    // Both replicas on Redis (the other test stops and restarts it too, and may have run first), and the log lines
    // read below are this test's own.
    for (const gw of [open, closed])
      await eventually(
        async () => expect((await fetch(`${gw.url}/health/ready`)).status).toBe(200),
        10_000,
        100,
      );
    const openLogs = open.logs.length;
    const closedLogs = closed.logs.length;
    await open.admin('POST', '/admin/v1/teams', {
      id: 'outage',
      limits: { tokensPerDay: 1_000_000, requestsPerMinute: 10_000 },
    });
    const token = (await open.admin('POST', '/admin/v1/teams/outage/tokens', {})).body.token;
    const stranger = (await open.admin('POST', '/admin/v1/teams/outage/tokens', {})).body.token; // never seen by a request
    const client = open.openai(token);
    const strictClient = closed.openai(token);

    // Before: 3 requests through the fail-open replica, 1 through the strict one.
    for (let i = 0; i < 3; i++) await client.chat.completions.create(ask('before outage'));
    await strictClient.chat.completions.create(ask('before'));

    await redis.stop();
    await eventually(async () => expect((await fetch(`${open.url}/health/ready`)).status).toBe(503));

    // During: the fail-open replica answers, from the last known token set, without limit checks.
    const during = 6;
    for (let i = 0; i < during; i++) {
      const completion = await client.chat.completions.create(ask('during outage'));
      expect(completion.usage).toMatchObject({ prompt_tokens: 2, completion_tokens: 3 });
    }
    const stream = await client.chat.completions.create({ ...ask('streamed during outage'), stream: true });
    for await (const _ of stream) void _;
    expect(await metric(open, 'switchyard_usage_buffered_records')).toBe(during + 1);
    expect(await metric(open, 'switchyard_limits_unchecked_total')).toBe(during + 1);

    // A token this replica never saw cannot be vouched for: 503, a clear error, nothing cached wrongly.
    const unknown = await open.asTeam(stranger, 'POST', '/v1/chat/completions', ask('x'));
    expect(unknown.status).toBe(503);
    expect(unknown.body.error).toMatchObject({ code: 'auth_unavailable', type: 'server_error' });
    expect(unknown.body.error.message).toMatch(/token store is unreachable/);
    // Usage cannot be read meanwhile: 503 in OpenAI's error shape (it was a 500), for the team and for admins.
    for (const answer of [
      await open.asTeam(token, 'GET', '/v1/usage'),
      await open.admin('GET', '/admin/v1/usage?team=outage'),
      await open.admin('GET', '/admin/v1/usage'),
      await open.admin('GET', '/admin/v1/usage/records?team=outage'),
    ]) {
      expect(answer.status).toBe(503);
      expect(answer.body).toEqual({
        error: {
          message: expect.stringMatching(/^Usage cannot be read because Redis is unreachable/),
          type: 'server_error',
          param: null,
          code: 'store_unavailable',
        },
      });
    }
    // The strict replica refuses rather than serve without auth (auth.onOutage: reject).
    const strict = await closed.asTeam(token, 'POST', '/v1/chat/completions', ask('x'));
    expect(strict.status).toBe(503);
    expect(strict.body.error.code).toBe('auth_unavailable');

    await redis.start();
    // After: the buffer drains into the restarted Redis, and nothing was lost or counted twice.
    await eventually(
      async () => expect(await metric(open, 'switchyard_usage_buffered_records')).toBe(0),
      10_000,
      100,
    );
    expect(await metric(open, 'switchyard_usage_dropped_records_total')).toBe(0);
    const { total: usage } = await waitForUsageSummary(open, 'team=outage', 4 + during + 1, {
      timeoutMs: 5000,
      everyMs: 100,
    });
    expect(usage).toMatchObject({
      requests_ok: 4 + during + 1,
      prompt_tokens: 3 * 2 + 1 + during * 2 + 3,
      completion_tokens: 3 * 3 + 2 + during * 3 + 4,
      estimated_requests: 0,
    });
    const records = (await open.admin('GET', '/admin/v1/usage/records?team=outage&limit=100')).body.data;
    expect(records).toHaveLength(4 + during + 1);
    expect(new Set(records.map((r: any) => r.request_id)).size).toBe(records.length);
    // The outage was logged as one structured line per connection when it began and one when it ended, not a
    // line per reconnect attempt (ioredis retries every few hundred ms).
    const lost = open.logs.slice(openLogs).filter((l) => l.msg === 'redis connection lost; reconnecting');
    expect(lost.map((l) => l.connection).sort()).toEqual(['commands', 'subscriber', 'usage']);
    expect(lost[0]).toMatchObject({ level: 40, redis: redis.url, reason: expect.any(String) });
    await eventually(() =>
      expect(
        open.logs
          .slice(openLogs)
          .filter((l) => l.msg === 'redis connection restored')
          .map((l) => l.connection)
          .sort(),
      ).toEqual(['commands', 'subscriber', 'usage']),
    );
    // And the strict replica works again, limits checked, once its own command connection is back (the open
    // replica's reconnecting says nothing of this one's).
    await eventually(() =>
      expect(
        closed.logs
          .slice(closedLogs)
          .filter((l) => l.msg === 'redis connection restored')
          .map((l) => l.connection),
      ).toContain('commands'),
    );
    const after = await closed.asTeam(token, 'POST', '/v1/chat/completions', ask('after'));
    expect(after.status).toBe(200);
    expect(after.headers.get('x-ratelimit-limit-tokens')).toBe('1000000');
  });

  it('redis.onOutage: fail-closed answers 503 for limited teams instead of serving unchecked', async () => {
    // Auth from the last-known set, limits fail-closed: a replica configured that way.
    const failClosed = await startTestGateway({
      upstreamUrl: upstream.url,
      prefix: open.prefix,
      config: {
        redis: { url: redis.url, commandTimeoutMs: 500, onOutage: 'fail-closed' },
        auth: { onOutage: 'last-known' },
      },
    });
    try {
      // A limited team of its own (it used the first test's, and failed when it ran first).
      await failClosed.admin('POST', '/admin/v1/teams', {
        id: 'outage-closed',
        limits: { tokensPerDay: 1_000_000, requestsPerMinute: 10_000 },
      });
      const token = (await failClosed.admin('POST', '/admin/v1/teams/outage-closed/tokens', {})).body.token;
      expect((await failClosed.asTeam(token, 'POST', '/v1/chat/completions', ask('x'))).status).toBe(200);
      await redis.stop();
      await eventually(async () => expect((await fetch(`${failClosed.url}/health/ready`)).status).toBe(503));
      const refused = await failClosed.asTeam(token, 'POST', '/v1/chat/completions', ask('x'));
      expect(refused.status).toBe(503);
      expect(refused.body.error).toMatchObject({ code: 'limits_unavailable', type: 'server_error' });
      await redis.start();
      // Serving again once its command connection is back: polled on its log (a read), then asked once.
      await eventually(
        () =>
          expect(
            failClosed.logs.filter((l) => l.msg === 'redis connection restored').map((l) => l.connection),
          ).toContain('commands'),
        10_000,
        100,
      );
      expect((await failClosed.asTeam(token, 'POST', '/v1/chat/completions', ask('x'))).status).toBe(200);
    } finally {
      await failClosed.gateway.shutdown(200);
      failClosed.redis.disconnect();
    }
  });
});
