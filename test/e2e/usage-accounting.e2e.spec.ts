import { countTokens } from 'gpt-tokenizer'; // o200k_base, the gateway's tokenizer
import { eventually } from '../support/eventually';
import { OpenAIUpstream } from '../support/openai-upstream';
import { startTestGateway, type TestGateway } from '../support/test-gateway';
import {
  waitForOwnUsageSummary,
  waitForUsageRecord,
  waitForUsageRecords,
  waitForUsageSummary,
} from '../support/usage';

const today = () => new Date().toISOString().slice(0, 10);

describe('usage accounting (Redis is the store of record)', () => {
  let upstream: OpenAIUpstream;
  let gw: TestGateway;

  beforeAll(async () => {
    upstream = await new OpenAIUpstream().start();
    upstream.delayMs = 300; // the abandoned stream's client leaves long before a second word
    gw = await startTestGateway({ upstreamUrl: upstream.url });
  });
  afterAll(async () => {
    await gw.close();
    await upstream.stop();
  });

  it('a mixed run of streaming, non-streaming, aborted, failed and refused requests gives exact counters and one record each', async () => {
    await gw.admin('POST', '/admin/v1/teams', { id: 'mixed', limits: { tokensPerDay: 1_000_000 } });
    const a = (await gw.admin('POST', '/admin/v1/teams/mixed/tokens', { name: 'a' })).body;
    const b = (await gw.admin('POST', '/admin/v1/teams/mixed/tokens', { name: 'b' })).body;
    const client = gw.openai(a.token);

    // 3 non-streaming ok: prompt = words of the message, completion = words of "echo: <message>".
    await Promise.all(
      ['one', 'one two', 'one two three'].map((content) =>
        client.chat.completions.create({ model: 'echo', messages: [{ role: 'user', content }] }),
      ),
    );
    // 2 streaming ok (token b), one with the usage chunk, one without: both are accounted from upstream usage.
    for (const include_usage of [true, false]) {
      const stream = await gw.openai(b.token).chat.completions.create({
        model: 'echo',
        stream: true,
        ...(include_usage ? { stream_options: { include_usage } } : {}),
        messages: [{ role: 'user', content: 'four five' }],
      });
      for await (const _ of stream) void _;
    }
    // 1 stream abandoned by the client after two chunks: estimated.
    const controller = new AbortController();
    const slow = await client.chat.completions.create(
      { model: 'slow', stream: true, messages: [{ role: 'user', content: 'a b c d e f g' }] },
      { signal: controller.signal },
    );
    const it = slow[Symbol.asyncIterator]();
    await it.next();
    await it.next();
    controller.abort();
    // 1 upstream failure, 1 stream that fails midway, 1 invalid request, 1 unknown model.
    await expect(
      client.chat.completions.create({ model: 'status-500', messages: [{ role: 'user', content: 'x' }] }),
    ).rejects.toMatchObject({ status: 502 });
    const broken = await client.chat.completions.create({
      model: 'midstream-error',
      stream: true,
      messages: [{ role: 'user', content: 'p q r s' }],
    });
    await expect(
      (async () => {
        for await (const _ of broken) void _;
      })(),
    ).rejects.toThrow();
    await expect(
      client.chat.completions.create({ model: 'echo', messages: [{ role: 'wizard' as any, content: 'x' }] }),
    ).rejects.toMatchObject({ status: 400 });
    await expect(
      client.chat.completions.create({ model: 'nope', messages: [{ role: 'user', content: 'x' }] }),
    ).rejects.toMatchObject({ status: 404 });
    // 1 refused by the team's quota (it alone reserves more than the daily limit).
    await expect(
      client.chat.completions.create({
        model: 'echo',
        max_tokens: 2_000_000,
        messages: [{ role: 'user', content: 'x' }],
      }),
    ).rejects.toMatchObject({ status: 429 });

    const expectedOk = { prompt: 1 + 2 + 3 + 2 + 2, completion: 2 + 3 + 4 + 3 + 3 };
    const byToken = await waitForUsageSummary(
      gw,
      `team=mixed&groupBy=token&from=${today()}&to=${today()}`,
      11,
    );
    const records = await waitForUsageRecords(gw, 'mixed', 11);
    const byOutcome = (outcome: string) => records.filter((r) => r.outcome === outcome);
    expect(byOutcome('ok')).toHaveLength(5);
    expect(byOutcome('aborted')).toHaveLength(1);
    expect(byOutcome('error')).toHaveLength(4);
    expect(byOutcome('rejected')).toEqual([
      expect.objectContaining({ status: 429, error_code: 'quota_exceeded', model: 'echo', total_tokens: 0 }),
    ]);

    const aborted = byOutcome('aborted')[0];
    expect(aborted).toMatchObject({
      model: 'slow',
      stream: true,
      estimated: true,
      status: 200,
      token_id: a.id,
    });
    // The gateway's tokenizer (o200k_base) on what it sent and relayed: OpenAI's chat format for the prompt (3
    // priming, then 3 + role + content per message) and the one word relayed before the client left.
    expect(aborted).toMatchObject({
      prompt_tokens: 3 + 3 + countTokens('user') + countTokens('a b c d e f g'),
      completion_tokens: countTokens('echo: '),
    });
    const midstream = records.find((r) => r.model === 'midstream-error');
    expect(midstream).toMatchObject({
      outcome: 'error',
      error_code: 'upstream_error',
      estimated: true,
      status: 200,
    });
    expect(records.find((r) => r.model === 'status-500')).toMatchObject({
      outcome: 'error',
      status: 502,
      prompt_tokens: 0,
      completion_tokens: 0,
      estimated: false,
    });
    // Refused before routing, a request is still recorded under the model it asked for.
    expect(
      records
        .filter((r) => r.status === 400 || r.status === 404)
        .map((r) => [r.status, r.model])
        .sort(),
    ).toEqual([
      [400, 'echo'],
      [404, 'nope'],
    ]);
    for (const r of records) {
      expect(r.total_tokens).toBe(r.prompt_tokens + r.completion_tokens);
      expect(r).toMatchObject({
        team: 'mixed',
        request_id: expect.any(String),
        at: expect.any(String),
        latency_ms: expect.any(Number),
      });
    }
    const ok = byOutcome('ok');
    expect(
      ok.every((r) => r.estimated === false && r.backend === 'standin' && r.upstream_model === 'echo'),
    ).toBe(true);

    const estimated = {
      prompt: aborted.prompt_tokens + midstream.prompt_tokens,
      completion: aborted.completion_tokens + midstream.completion_tokens,
    };
    expect(byToken.total).toEqual({
      requests: 11,
      requests_ok: 5,
      requests_error: 4,
      requests_aborted: 1,
      requests_rejected: 1,
      prompt_tokens: expectedOk.prompt + estimated.prompt,
      completion_tokens: expectedOk.completion + estimated.completion,
      reasoning_tokens: 0,
      cached_tokens: 0,
      cache_write_tokens: 0,
      total_tokens: expectedOk.prompt + expectedOk.completion + estimated.prompt + estimated.completion,
      estimated_requests: 2,
      // The stand-in's models have no price: every request that spent tokens is flagged, none counted as free, and
      // the sum is unknown (null), not 0 (the 4 that spent nothing cost 0 whatever the price).
      cost: null,
      cost_nanos: null,
      cost_unknown_requests: 7,
    });
    const rowB = byToken.data.find((row: any) => row.token_id === b.id);
    expect(rowB).toMatchObject({
      team: 'mixed',
      requests: 2,
      requests_ok: 2,
      prompt_tokens: 4,
      completion_tokens: 6,
      total_tokens: 10,
    });

    const byModel = (await gw.admin('GET', '/admin/v1/usage?team=mixed&groupBy=model')).body.data;
    expect(byModel.find((row: any) => row.model === 'echo')).toMatchObject({
      requests: 7,
      requests_rejected: 1,
      requests_error: 1,
      prompt_tokens: expectedOk.prompt,
      completion_tokens: expectedOk.completion,
    });
    const echoOnly = (await gw.admin('GET', '/admin/v1/usage?team=mixed&model=echo&groupBy=day')).body;
    expect(echoOnly.data).toEqual([expect.objectContaining({ day: today(), requests: 7, requests_ok: 5 })]);
  });

  it("GET /v1/usage: a team reads its own usage with its token, never another team's", async () => {
    const mine = await gw.teamToken('reader');
    const other = await gw.teamToken('other');
    await gw
      .openai(other.token)
      .chat.completions.create({ model: 'echo', messages: [{ role: 'user', content: 'c' }] });
    await gw
      .openai(mine.token)
      .chat.completions.create({ model: 'echo', messages: [{ role: 'user', content: 'a b' }] });
    const own = await waitForOwnUsageSummary(gw, mine.token, 'groupBy=model', 1);
    expect(own).toMatchObject({ object: 'usage', team: 'reader', group_by: 'model', to: today() });
    expect(own.data).toEqual([
      expect.objectContaining({
        team: 'reader',
        model: 'echo',
        prompt_tokens: 2,
        completion_tokens: 3,
        total_tokens: 5,
      }),
    ]);
    const foreign = await gw.asTeam(mine.token, 'GET', '/v1/usage?team=other');
    expect(foreign.status).toBe(403);
    expect(foreign.body.error).toMatchObject({ code: 'permission_denied', param: 'team' });
    expect((await gw.asTeam(mine.token, 'GET', '/admin/v1/usage')).status).toBe(401);
    expect((await gw.admin('GET', '/admin/v1/usage?from=2026-13-01')).status).toBe(400);
    expect((await gw.admin('GET', '/admin/v1/usage?from=2026-01-02&to=2026-01-01')).status).toBe(400);
    expect((await gw.admin('GET', '/admin/v1/usage?groupBy=week')).body.error.param).toBe('groupBy');
    // Without a team filter the admin sees every team (this test's two, whatever other tests ran before it), once
    // the other team's request is recorded too.
    await waitForUsageSummary(gw, 'team=other', 1);
    const all = (await gw.admin('GET', '/admin/v1/usage?groupBy=model')).body.data.map(
      (row: any) => row.team,
    );
    expect(all).toEqual(expect.arrayContaining(['reader', 'other']));
  });

  it('records are kept in a per-team Redis Stream trimmed by retention', async () => {
    const { token } = await gw.teamToken('stream-check');
    await gw
      .openai(token)
      .chat.completions.create({ model: 'echo', messages: [{ role: 'user', content: 'z' }] });
    await waitForUsageRecord(gw, 'stream-check');
    expect(await gw.redis.xlen(`${gw.prefix}usage:{stream-check}:records`)).toBe(1);
    // An entry older than usage.recordRetentionDays (90) is trimmed by the next write (XADD MINID).
    const key = `${gw.prefix}usage:{stream-check}:records`;
    const oldId = `${Date.now() - 91 * 86_400_000}-0`;
    await gw.redis.del(key);
    await gw.redis.xadd(key, oldId, 'old', '1');
    await gw
      .openai(token)
      .chat.completions.create({ model: 'echo', messages: [{ role: 'user', content: 'z' }] });
    await eventually(async () => {
      const entries = await gw.redis.xrange(key, '-', '+');
      expect(entries.map(([id]) => id)).not.toContain(oldId);
      expect(entries).toHaveLength(1);
    });
  });

  it('a refused request counts under the model it asked for: records as asked, counters and metrics only under configured names', async () => {
    await gw.admin('POST', '/admin/v1/teams', {
      id: 'asked',
      models: ['echo'],
      limits: { tokensPerDay: 1_000_000 },
    });
    const token = (await gw.admin('POST', '/admin/v1/teams/asked/tokens', {})).body.token;
    const chat = (body: object) => gw.asTeam(token, 'POST', '/v1/chat/completions', body);
    const hi = [{ role: 'user', content: 'hi' }];
    const long = `typo-${'x'.repeat(1000)}`;
    expect((await chat({ model: 'echo', messages: hi })).status).toBe(200);
    // Refused by the team's quota (it alone reserves more than the day allows), by the team's model list, as an
    // unknown model (three times, one on the Messages API, one with a 1000-character name), as invalid, and with
    // no model at all.
    expect((await chat({ model: 'echo', max_tokens: 2_000_000, messages: hi })).status).toBe(429);
    expect((await chat({ model: 'slow', messages: hi })).status).toBe(403);
    expect((await chat({ model: 'gpt-typo', messages: hi })).status).toBe(404);
    expect((await chat({ model: long, messages: hi })).status).toBe(404);
    expect(
      (await gw.asTeam(token, 'POST', '/v1/messages', { model: 'claude-typo', max_tokens: 5, messages: hi }))
        .status,
    ).toBe(404);
    expect((await chat({ model: 'echo', messages: [{ role: 'wizard', content: 'x' }] })).status).toBe(400);
    expect((await chat({ messages: hi })).status).toBe(400);

    const records = await waitForUsageRecords(gw, 'asked', 8);
    expect(records.map((r) => [r.status, r.model]).sort()).toEqual(
      [
        [200, 'echo'],
        [400, '-'],
        [400, 'echo'],
        [403, 'slow'],
        [404, 'claude-typo'],
        [404, 'gpt-typo'],
        [404, long.slice(0, 256)],
        [429, 'echo'],
      ].sort(),
    );
    const byModel = (await gw.admin('GET', '/admin/v1/usage?team=asked&groupBy=model')).body.data;
    expect(byModel.map((row: any) => [row.model, row.requests])).toEqual(
      [
        ['(unconfigured)', 3],
        ['-', 1],
        ['echo', 3],
        ['slow', 1],
      ].sort((a: any, b: any) => a[0].localeCompare(b[0])),
    );
    expect(byModel.find((row: any) => row.model === 'echo')).toMatchObject({
      requests_ok: 1,
      requests_rejected: 1,
      requests_error: 1,
    });

    const metrics = await (await fetch(`${gw.url}/metrics`)).text();
    const series = metrics
      .split('\n')
      .filter((line) => line.startsWith('switchyard_requests_total{team="asked"'));
    const requestsOf = (model: string) =>
      series
        .filter((line) => line.includes(`model="${model}"`))
        .reduce((sum, line) => sum + Number(line.split(' ').pop()), 0);
    expect(requestsOf('echo')).toBe(3);
    expect(requestsOf('slow')).toBe(1);
    expect(requestsOf('(unconfigured)')).toBe(3);
    expect(requestsOf('-')).toBe(1);
    expect(series.filter((line) => line.includes('typo'))).toEqual([]);
    expect(series).toContainEqual(
      expect.stringContaining(
        'model="echo",backend="standin",endpoint="chat.completions",status_code="429",stream="false",outcome="rejected"',
      ),
    );
  });
});
