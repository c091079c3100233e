import { randomBytes } from 'node:crypto';
import { OpenAIUpstream } from '../support/openai-upstream';
import { startTestGateway, type TestGateway } from '../support/test-gateway';
import { eventually } from '../support/eventually';

/**
 * The request log through the whole app (Redis store, the default): one entry per model request with its attempts,
 * timings, usage and cost; content only for teams that keep it, redacted; read back through the admin API (filters,
 * paging, one entry) and by a team through /v1/requests (its own entries only).
 */
describe('request log (Redis store)', () => {
  jest.setTimeout(60_000);
  let upstream: OpenAIUpstream;
  let gw: TestGateway;

  beforeAll(async () => {
    upstream = await new OpenAIUpstream().start();
    gw = await startTestGateway({
      upstreamUrl: upstream.url,
      config: {
        models: {
          'retry-then-echo': {
            routing: 'priority',
            deployments: [
              { backend: 'standin', upstreamModel: 'status-503' },
              { backend: 'standin', upstreamModel: 'echo' },
            ],
          },
        },
        routing: { retries: { attempts: 1, backoffMs: 1 } },
      },
    });
  });
  afterAll(async () => {
    await gw.close();
    await upstream.stop();
  });

  /** A new team with a token, and a way to send chat requests as it. */
  async function team(settings: Record<string, unknown> = {}) {
    const id = `log-${randomBytes(4).toString('hex')}`;
    expect((await gw.admin('POST', '/admin/v1/teams', { id, ...settings })).status).toBe(201);
    const issued = await gw.admin('POST', `/admin/v1/teams/${id}/tokens`, { name: 'ci bot' });
    expect(issued.status).toBe(201);
    return {
      id,
      tokenId: issued.body.id as string,
      client: gw.openai(issued.body.token as string),
      token: issued.body.token as string,
    };
  }

  async function entries(query: string, expected: number) {
    return eventually(async () => {
      const page = await gw.admin('GET', `/admin/v1/requests?${query}`);
      expect(page.status).toBe(200);
      expect(page.body.data).toHaveLength(expected);
      return page.body as { data: any[]; next: string | null };
    }, 10_000);
  }

  it('keeps one entry per request: who, where, every attempt, the timings, usage and cost; metadata only by default', async () => {
    const { id, tokenId, client } = await team();
    const traceId = randomBytes(16).toString('hex');
    const answer = await client.chat.completions.create(
      { model: 'retry-then-echo', messages: [{ role: 'user', content: 'hello big world' }] },
      { headers: { traceparent: `00-${traceId}-${randomBytes(8).toString('hex')}-01` } },
    );
    expect(answer.choices[0].message.content).toBe('echo: hello big world');
    const [entry] = (await entries(`team=${id}`, 1)).data;
    expect(entry).toMatchObject({
      object: 'request',
      team: id,
      token: { id: tokenId, name: 'ci bot' },
      person: null,
      endpoint: 'chat.completions',
      stream: false,
      model: 'retry-then-echo',
      servedModel: 'retry-then-echo',
      deployment: 'standin/echo',
      status: 200,
      outcome: 'ok',
      errorCode: null,
      // The stand-in counts words: 3 in the prompt, "echo:" and the 3 words back.
      usage: {
        prompt: 3,
        completion: 4,
        reasoning: 0,
        cached: 0,
        cacheWrite: 0,
        cacheWrite1h: 0,
        estimated: false,
      },
      traceId,
      contentKept: false,
    });
    expect(entry.attempts).toEqual([
      expect.objectContaining({
        kind: 'call',
        deployment: 'standin/status-503',
        outcome: 'upstream_unavailable',
        status: 503,
      }),
      expect.objectContaining({
        kind: 'call',
        deployment: 'standin/echo',
        outcome: 'ok',
        status: 200,
        error: null,
      }),
    ]);
    expect(entry.attempts[0].error).toContain('Upstream says 503');
    for (const attempt of entry.attempts) expect(attempt.durationMs).toBeGreaterThan(0);
    expect(entry.latencyMs).toBeGreaterThanOrEqual(
      entry.attempts[0].durationMs + entry.attempts[1].durationMs,
    );
    expect(entry.ttfbMs).toBeGreaterThan(0);
    expect(entry.ttfbMs).toBeLessThanOrEqual(entry.latencyMs);
    expect(Math.abs(Date.parse(entry.at) - Date.now())).toBeLessThan(60_000);
    expect(entry.clientAddress).toMatch(/127\.0\.0\.1/);
    // The same request's usage record has the same id.
    const records = await gw.admin('GET', `/admin/v1/usage/records?team=${id}`);
    expect(records.body.data[0].id).toBe(entry.id);
    // Metadata only: the entry says so and nothing was kept.
    const one = await gw.admin('GET', `/admin/v1/requests/${entry.id}`);
    expect(one.status).toBe(200);
    expect(one.body.content).toBeNull();
  });

  it('keeps content for a team that asks for it, redacted; a stream is assembled and written once, at its end', async () => {
    const { id, client } = await team({ logging: { content: 'full' } });
    const prompt = 'mail jane.doe@example.com or call +49 30 1234567 about card 4111 1111 1111 1111';
    await client.chat.completions.create({ model: 'echo', messages: [{ role: 'user', content: prompt }] });
    const stream = await client.chat.completions.create({
      model: 'echo',
      stream: true,
      messages: [{ role: 'user', content: 'stream to ops@example.org please' }],
    });
    for await (const chunk of stream) void chunk;
    const { data } = await entries(`team=${id}`, 2);
    const [streamed, whole] = data; // newest first
    expect(streamed).toMatchObject({ stream: true, contentKept: true, status: 200, outcome: 'ok' });
    expect(whole).toMatchObject({ stream: false, contentKept: true });
    const wholeContent = (await gw.admin('GET', `/admin/v1/requests/${whole.id}`)).body.content;
    expect(wholeContent.request.messages).toEqual([
      { role: 'user', content: 'mail [email] or call [phone] about card [card]' },
    ]);
    expect(wholeContent.response).toEqual([
      expect.objectContaining({
        role: 'assistant',
        content: 'echo: mail [email] or call [phone] about card [card]',
      }),
    ]);
    const streamedContent = (await gw.admin('GET', `/admin/v1/requests/${streamed.id}`)).body.content;
    expect(streamedContent.response).toEqual([
      { role: 'assistant', content: 'echo: stream to [email] please' },
    ]);
    expect(JSON.stringify(streamedContent)).not.toContain('example.org');
  });

  it('a team-admin change of logging.content applies to the next request', async () => {
    const { id, client } = await team();
    await client.chat.completions.create({ model: 'echo', messages: [{ role: 'user', content: 'before' }] });
    const changed = await gw.admin('PATCH', `/admin/v1/teams/${id}`, { logging: { content: 'full' } });
    expect(changed.status).toBe(200);
    expect(changed.body.logging).toEqual({ content: 'full' });
    await client.chat.completions.create({ model: 'echo', messages: [{ role: 'user', content: 'after' }] });
    const { data } = await entries(`team=${id}`, 2);
    expect(data.map((entry) => entry.contentKept)).toEqual([true, false]);
    const refused = await gw.admin('PATCH', `/admin/v1/teams/${id}`, { logging: { content: 'some' } });
    expect(refused.status).toBe(400);
  });

  it('filters and pages newest first, with no entry twice and none left out', async () => {
    const { id, client } = await team();
    const sent: string[] = [];
    for (let i = 0; i < 7; i++) {
      const model = i % 3 === 0 ? 'status-400' : 'echo';
      sent.push(model);
      await client.chat.completions
        .create({ model, messages: [{ role: 'user', content: `number ${i}` }] })
        .catch(() => undefined);
    }
    await entries(`team=${id}&limit=100`, 7);
    const seen: any[] = [];
    let after: string | null = '';
    let pages = 0;
    while (after !== null) {
      const page = await gw.admin(
        'GET',
        `/admin/v1/requests?team=${id}&limit=3${after ? `&after=${after}` : ''}`,
      );
      expect(page.status).toBe(200);
      seen.push(...page.body.data);
      after = page.body.next;
      pages++;
    }
    expect(pages).toBe(3);
    expect(seen.map((entry) => entry.model)).toEqual([...sent].reverse());
    expect(new Set(seen.map((entry) => entry.id)).size).toBe(7);
    for (let i = 1; i < seen.length; i++)
      expect(Date.parse(seen[i - 1].at)).toBeGreaterThanOrEqual(Date.parse(seen[i].at));
    const failed = await gw.admin('GET', `/admin/v1/requests?team=${id}&status=400`);
    expect(failed.body.data.map((entry: any) => entry.model)).toEqual([
      'status-400',
      'status-400',
      'status-400',
    ]);
    expect(failed.body.data[0]).toMatchObject({ outcome: 'error', errorCode: expect.any(String) });
    const errors = await gw.admin('GET', `/admin/v1/requests?team=${id}&outcome=error`);
    expect(errors.body.data.map((entry: any) => entry.status)).toEqual([400, 400, 400]);
    expect((await gw.admin('GET', `/admin/v1/requests?team=${id}&outcome=broken`)).status).toBe(400);
    const byModel = await gw.admin(
      'GET',
      `/admin/v1/requests?team=${id}&model=echo&endpoint=chat.completions`,
    );
    expect(byModel.body.data).toHaveLength(4);
    const future = await gw.admin(
      'GET',
      `/admin/v1/requests?team=${id}&from=${new Date(Date.now() + 60_000).toISOString()}`,
    );
    expect(future.body.data).toEqual([]);
    const badCursor = await gw.admin('GET', `/admin/v1/requests?team=${id}&after=bm90LWEtY3Vyc29y`);
    expect(badCursor.status).toBe(400);
  });

  it("a team token reads its own team's entries through /v1/requests, never another's", async () => {
    const mine = await team();
    const theirs = await team();
    await mine.client.chat.completions.create({
      model: 'echo',
      messages: [{ role: 'user', content: 'mine' }],
    });
    await theirs.client.chat.completions.create({
      model: 'echo',
      messages: [{ role: 'user', content: 'theirs' }],
    });
    await entries(`team=${mine.id}`, 1);
    const [other] = (await entries(`team=${theirs.id}`, 1)).data;
    const own = await gw.asTeam(mine.token, 'GET', '/v1/requests');
    expect(own.status).toBe(200);
    expect(own.body.data.map((entry: any) => entry.team)).toEqual([mine.id]);
    expect((await gw.asTeam(mine.token, 'GET', `/v1/requests?team=${theirs.id}`)).status).toBe(403);
    expect((await gw.asTeam(mine.token, 'GET', `/v1/requests/${other.id}`)).status).toBe(404);
    expect((await gw.asTeam(theirs.token, 'GET', `/v1/requests/${other.id}`)).status).toBe(200);
  });
});
