import Anthropic from '@anthropic-ai/sdk';
import { AnthropicUpstream } from '../support/anthropic-upstream';
import { eventually } from '../support/eventually';
import { OpenAIUpstream } from '../support/openai-upstream';
import { startTestGateway, type TestGateway } from '../support/test-gateway';
import { waitForUsageRecords } from '../support/usage';

/**
 * The response cache (docs/response-cache.md) through the whole app: the official SDKs against the stand-ins, the
 * stand-ins counting the calls that reached them. Each test sends its own marker text, so calls and records of other
 * tests are not counted.
 */
describe('response cache', () => {
  let openai: OpenAIUpstream;
  let anthropic: AnthropicUpstream;
  let gw: TestGateway;
  const cached = { ttlSeconds: 300 };

  beforeAll(async () => {
    [openai, anthropic] = await Promise.all([new OpenAIUpstream().start(), new AnthropicUpstream().start()]);
    gw = await startTestGateway({
      upstreamUrl: openai.url,
      config: {
        backends: { claude: { type: 'anthropic', baseUrl: anthropic.url, apiKey: '${TEST_UPSTREAM_KEY}' } },
        models: {
          'cached-echo': { backend: 'standin', upstreamModel: 'echo', responseCache: cached },
          'metered-echo': { backend: 'standin', upstreamModel: 'echo', responseCache: cached },
          'priced-echo': {
            backend: 'standin',
            upstreamModel: 'echo',
            price: { input: 1000, output: 2000 },
            responseCache: cached,
          },
          'brief-echo': { backend: 'standin', upstreamModel: 'echo', responseCache: { ttlSeconds: 1 } },
          'tiny-echo': {
            backend: 'standin',
            upstreamModel: 'echo',
            responseCache: { ttlSeconds: 300, maxEntryBytes: 64 },
          },
          'cached-broken': { backend: 'standin', upstreamModel: 'midstream-error', responseCache: cached },
          'cached-claude': { backend: 'claude', upstreamModel: 'claude-echo', responseCache: cached },
          'cached-embedder': {
            backend: 'standin',
            upstreamModel: 'text-embedding-3-small',
            kind: 'embedding',
            responseCache: cached,
          },
        },
        teams: { 'opted-out': { responseCache: false } },
      },
    });
  });
  afterAll(async () => {
    await gw?.close();
    await Promise.all([openai?.stop(), anthropic?.stop()]);
  });

  const ask = (marker: string) => [{ role: 'user' as const, content: `say ${marker}` }];

  it('a repeated request is answered from the cache: the same answer, one upstream call, hit and miss headers', async () => {
    const { token } = await gw.teamToken('alpha');
    const client = gw.openai(token);
    const request = { model: 'cached-echo', messages: ask('m-whole') };

    const first = await client.chat.completions.create(request).withResponse();
    const second = await client.chat.completions.create(request).withResponse();

    expect(first.response.headers.get('x-switchyard-cache')).toBe('miss');
    expect(second.response.headers.get('x-switchyard-cache')).toBe('hit');
    expect(second.data).toEqual(first.data);
    expect(second.data.choices[0].message.content).toBe('echo: say m-whole');
    expect(openai.calls({ containing: 'm-whole' })).toBe(1);
    // No backend answered the hit.
    expect(second.response.headers.get('x-switchyard-model')).toBe('cached-echo');
    expect(second.response.headers.get('x-switchyard-backend')).toBeNull();
  });

  it('a model without a cache has no cache header and always calls its backend', async () => {
    const { token } = await gw.teamToken('alpha');
    const client = gw.openai(token);
    for (let i = 0; i < 2; i++) {
      const { response } = await client.chat.completions
        .create({ model: 'echo', messages: ask('m-uncached') })
        .withResponse();
      expect(response.headers.get('x-switchyard-cache')).toBeNull();
    }
    expect(openai.calls({ containing: 'm-uncached' })).toBe(2);
  });

  it('a stream is replayed as the same stream, byte for byte, and a whole request is keyed apart from it', async () => {
    const { token } = await gw.teamToken('alpha');
    const body = {
      model: 'cached-echo',
      stream: true,
      stream_options: { include_usage: true },
      messages: ask('m-stream'),
    };
    const raw = async () => {
      const response = await fetch(`${gw.url}/v1/chat/completions`, {
        method: 'POST',
        headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
        body: JSON.stringify(body),
      });
      return {
        header: response.headers.get('x-switchyard-cache'),
        type: response.headers.get('content-type'),
        text: await response.text(),
      };
    };
    const first = await raw();
    const second = await raw();
    expect([first.header, second.header]).toEqual(['miss', 'hit']);
    expect(second.type).toBe('text/event-stream; charset=utf-8');
    expect(second.text).toBe(first.text);
    expect(second.text.endsWith('data: [DONE]\n\n')).toBe(true);

    // The SDK reads the replay as a stream: the words, then the usage chunk it asked for.
    const stream = await gw
      .openai(token)
      .chat.completions.create(body as any)
      .withResponse();
    expect(stream.response.headers.get('x-switchyard-cache')).toBe('hit');
    const chunks: any[] = [];
    for await (const chunk of stream.data as any) chunks.push(chunk);
    expect(chunks.map((c) => c.choices[0]?.delta?.content ?? '').join('')).toBe('echo: say m-stream');
    expect(chunks.at(-1).usage).toMatchObject({ prompt_tokens: expect.any(Number) });
    expect(openai.calls({ containing: 'm-stream' })).toBe(1);

    // Without include_usage the bytes differ (no usage chunk): another key.
    const plain = await gw
      .openai(token)
      .chat.completions.create({ model: 'cached-echo', stream: true, messages: ask('m-stream') })
      .withResponse();
    for await (const _ of plain.data) void _;
    expect(plain.response.headers.get('x-switchyard-cache')).toBe('miss');
    // Nor does a whole answer come from a stored stream.
    const whole = await gw
      .openai(token)
      .chat.completions.create({ model: 'cached-echo', messages: ask('m-stream') })
      .withResponse();
    expect(whole.response.headers.get('x-switchyard-cache')).toBe('miss');
    expect(openai.calls({ containing: 'm-stream' })).toBe(3);
  });

  it("a team never gets another team's answer", async () => {
    const a = await gw.teamToken('team-a');
    const b = await gw.teamToken('team-b');
    const request = { model: 'cached-echo', messages: ask('m-teams') };
    const fromA = await gw.openai(a.token).chat.completions.create(request).withResponse();
    const fromB = await gw.openai(b.token).chat.completions.create(request).withResponse();
    expect(fromA.response.headers.get('x-switchyard-cache')).toBe('miss');
    expect(fromB.response.headers.get('x-switchyard-cache')).toBe('miss');
    expect(openai.calls({ containing: 'm-teams' })).toBe(2);
    const again = await gw.openai(b.token).chat.completions.create(request).withResponse();
    expect(again.response.headers.get('x-switchyard-cache')).toBe('hit');
    expect(again.data.id).toBe(fromB.data.id);
    expect(again.data.id).not.toBe(fromA.data.id);
  });

  it('Cache-Control: no-cache skips the lookup and stores the fresh answer; no-store skips both', async () => {
    const { token } = await gw.teamToken('alpha');
    const client = gw.openai(token);
    const request = { model: 'cached-echo', messages: ask('m-nocache') };
    await client.chat.completions.create(request);
    const bypassed = await client.chat.completions
      .create(request, { headers: { 'Cache-Control': 'no-cache' } })
      .withResponse();
    expect(bypassed.response.headers.get('x-switchyard-cache')).toBe('bypass');
    expect(openai.calls({ containing: 'm-nocache' })).toBe(2);
    // The fresh answer replaced the stored one.
    const after = await client.chat.completions.create(request).withResponse();
    expect(after.response.headers.get('x-switchyard-cache')).toBe('hit');
    expect(after.data.id).toBe(bypassed.data.id);

    const unstored = { model: 'cached-echo', messages: ask('m-nostore') };
    const notKept = await client.chat.completions
      .create(unstored, { headers: { 'Cache-Control': 'no-store' } })
      .withResponse();
    expect(notKept.response.headers.get('x-switchyard-cache')).toBe('bypass');
    const next = await client.chat.completions.create(unstored).withResponse();
    expect(next.response.headers.get('x-switchyard-cache')).toBe('miss');
    expect(openai.calls({ containing: 'm-nostore' })).toBe(2);
  });

  it('a hit is recorded: cacheHit, its tokens counted, cost 0, no backend; limits count it as a request', async () => {
    await gw.admin('POST', '/admin/v1/teams', { id: 'recorded', limits: { requestsPerMinute: 2 } });
    const { token } = await gw.teamToken('recorded');
    const client = gw.openai(token);
    const request = { model: 'cached-echo', messages: ask('m-record') };
    const first = await client.chat.completions.create(request);
    await client.chat.completions.create(request);
    const [hit, miss] = await waitForUsageRecords(gw, 'recorded', 2);
    expect(miss).toMatchObject({ cache_hit: false, attempts: 1, backend: 'standin' });
    expect(hit).toMatchObject({
      cache_hit: true,
      outcome: 'ok',
      status: 200,
      attempts: 0,
      backend: null,
      prompt_tokens: first.usage!.prompt_tokens,
      completion_tokens: first.usage!.completion_tokens,
      cost: 0,
      cost_nanos: 0,
    });
    // Its request log entry says so: no deployment, no attempts, cost 0.
    const logged = await eventually(async () => {
      const one = await gw.admin('GET', `/admin/v1/requests/${hit.id}`);
      expect(one.status).toBe(200);
      return one.body;
    });
    expect(logged).toMatchObject({ cacheHit: true, deployment: null, attempts: [], costNanos: 0 });
    expect((await gw.admin('GET', `/admin/v1/requests/${miss.id}`)).body).toMatchObject({ cacheHit: false });
    // The third request (a hit too) is over requestsPerMinute: 2. It is refused, and not counted as a hit.
    const hits = async () =>
      Number(
        /switchyard_response_cache_total\{model="cached-echo",result="hit"\} (\d+)/.exec(
          await (await fetch(`${gw.url}/metrics`)).text(),
        )?.[1] ?? 0,
      );
    const hitsBefore = await hits();
    await expect(client.chat.completions.create(request)).rejects.toMatchObject({ status: 429 });
    expect(openai.calls({ containing: 'm-record' })).toBe(1);
    expect(await hits()).toBe(hitsBefore);
  });

  it('a hit settles no tokens against token limits (the miss settles what it used)', async () => {
    await gw.admin('POST', '/admin/v1/teams', { id: 'token-limited', limits: { tokensPerDay: 100_000 } });
    const { token } = await gw.teamToken('token-limited');
    const client = gw.openai(token);
    const request = { model: 'cached-echo', max_tokens: 50, messages: ask('m-tokens') };
    // What the admission left, each request once the one before was recorded (its reservation settled).
    const remainingAfter = async (recorded: number) => {
      await waitForUsageRecords(gw, 'token-limited', recorded);
      const { response } = await client.chat.completions.create(request).withResponse();
      return Number(response.headers.get('x-ratelimit-remaining-tokens'));
    };
    const miss = await remainingAfter(0);
    const firstHit = await remainingAfter(1);
    const secondHit = await remainingAfter(2);
    const [, , used] = await waitForUsageRecords(gw, 'token-limited', 3);
    expect(miss - firstHit).toBe(used.total_tokens);
    expect(secondHit).toBe(firstHit);
  });

  it('a hit is not charged to budgets: only the miss is spent', async () => {
    await gw.admin('POST', '/admin/v1/teams', { id: 'budgeted', limits: { budgetPerDay: 100 } });
    const { token } = await gw.teamToken('budgeted');
    const client = gw.openai(token);
    const request = { model: 'priced-echo', max_tokens: 20, messages: ask('m-budget') };
    for (let i = 0; i < 3; i++) await client.chat.completions.create(request);
    const records = await waitForUsageRecords(gw, 'budgeted', 3);
    const missed = records.find((record) => !record.cache_hit);
    expect(missed.cost_nanos).toBeGreaterThan(0);
    expect(records.filter((record) => record.cache_hit).map((record) => record.cost_nanos)).toEqual([0, 0]);
    await eventually(async () => {
      const { body } = await gw.admin('GET', '/admin/v1/teams/budgeted/budget');
      expect(body.budgets[0].spent).toBe(missed.cost_nanos / 1e9);
    });
    expect(openai.calls({ containing: 'm-budget' })).toBe(1);
  });

  it('counts hits, misses, bypasses and stores in switchyard_response_cache_total', async () => {
    const { token } = await gw.teamToken('alpha');
    const client = gw.openai(token);
    const request = { model: 'metered-echo', messages: ask('m-metric') };
    await client.chat.completions.create(request);
    await client.chat.completions.create(request);
    await client.chat.completions.create(request);
    await client.chat.completions.create(request, { headers: { 'Cache-Control': 'no-cache' } });
    const metric = (result: string) =>
      new RegExp(`switchyard_response_cache_total\\{model="metered-echo",result="${result}"\\} (\\d+)`);
    await eventually(async () => {
      const text = await (await fetch(`${gw.url}/metrics`)).text();
      expect(text).toMatch(metric('miss'));
      expect(Number(metric('miss').exec(text)![1])).toBe(1);
      expect(Number(metric('hit').exec(text)![1])).toBe(2);
      expect(Number(metric('bypass').exec(text)![1])).toBe(1);
      expect(Number(metric('stored').exec(text)![1])).toBe(2);
    });
  });

  it("an answer expires after its model's TTL", async () => {
    const { token } = await gw.teamToken('ttl-team');
    const client = gw.openai(token);
    const request = { model: 'brief-echo', messages: ask('m-ttl') };
    await client.chat.completions.create(request);
    const entries = () => gw.redis.keys(`${gw.prefix}rcache:{ttl-team}:*`);
    const [stored] = await eventually(async () => {
      const keys = await entries();
      expect(keys).toHaveLength(1);
      return keys;
    });
    // Kept for the model's second (not asserted as a hit: on a loaded machine the second may be over by then).
    expect(await gw.redis.pttl(stored)).toBeLessThanOrEqual(1000);
    await eventually(async () => expect(await entries()).toHaveLength(0), 5000);
    const expired = await client.chat.completions.create(request).withResponse();
    expect(expired.response.headers.get('x-switchyard-cache')).toBe('miss');
    expect(openai.calls({ containing: 'm-ttl' })).toBe(2);
  });

  it('a team that opted out (config seed, or the admin API) never uses the cache', async () => {
    const seeded = await gw.teamToken('opted-out');
    for (let i = 0; i < 2; i++) {
      const { response } = await gw
        .openai(seeded.token)
        .chat.completions.create({ model: 'cached-echo', messages: ask('m-optout') })
        .withResponse();
      expect(response.headers.get('x-switchyard-cache')).toBeNull();
    }
    expect(openai.calls({ containing: 'm-optout' })).toBe(2);

    const changed = await gw.teamToken('opts-out-later');
    const request = { model: 'cached-echo', messages: ask('m-later') };
    await gw.openai(changed.token).chat.completions.create(request);
    const patched = await gw.admin('PATCH', '/admin/v1/teams/opts-out-later', { responseCache: false });
    expect(patched).toMatchObject({ status: 200, body: { responseCache: false } });
    await eventually(async () => {
      const { response } = await gw.openai(changed.token).chat.completions.create(request).withResponse();
      expect(response.headers.get('x-switchyard-cache')).toBeNull();
    });
  });

  it('stores no failed stream and no answer over maxEntryBytes', async () => {
    const { token } = await gw.teamToken('alpha');
    const client = gw.openai(token);
    for (let i = 0; i < 2; i++) {
      const broken = await client.chat.completions
        .create({ model: 'cached-broken', stream: true, messages: ask('m-broken') })
        .withResponse();
      expect(broken.response.headers.get('x-switchyard-cache')).toBe('miss');
      await expect(
        (async () => {
          for await (const _ of broken.data) void _;
        })(),
      ).rejects.toThrow();
    }
    expect(openai.calls({ containing: 'm-broken' })).toBe(2);

    for (let i = 0; i < 2; i++) {
      const { response } = await client.chat.completions
        .create({ model: 'tiny-echo', messages: ask('m-tiny') })
        .withResponse();
      expect(response.headers.get('x-switchyard-cache')).toBe('miss');
    }
    expect(openai.calls({ containing: 'm-tiny' })).toBe(2);
    const text = await (await fetch(`${gw.url}/metrics`)).text();
    expect(text).toMatch(/switchyard_response_cache_total\{model="tiny-echo",result="too_large"\} 2/);
  });

  it('Messages through the Anthropic SDK: a stream replayed as the same Anthropic events', async () => {
    const { token } = await gw.teamToken('alpha');
    const client = new Anthropic({ apiKey: token, baseURL: gw.url, maxRetries: 0 });
    const request = {
      model: 'cached-claude',
      max_tokens: 100,
      stream: true as const,
      messages: [{ role: 'user' as const, content: 'say m-claude' }],
    };
    const read = async () => {
      const { data, response } = await client.messages.create(request).withResponse();
      const events: any[] = [];
      for await (const event of data) events.push(event);
      return { header: response.headers.get('x-switchyard-cache'), events };
    };
    const first = await read();
    const second = await read();
    expect([first.header, second.header]).toEqual(['miss', 'hit']);
    expect(second.events).toEqual(first.events);
    expect(second.events.map((e) => e.type)).toEqual(
      expect.arrayContaining(['message_start', 'content_block_delta', 'message_delta', 'message_stop']),
    );
    expect(anthropic.calls({ containing: 'm-claude' })).toBe(1);

    // A whole Messages answer is cached too, apart from the stream.
    const whole = { ...request, stream: false as const };
    const a = await client.messages.create(whole).withResponse();
    const b = await client.messages.create(whole).withResponse();
    expect([
      a.response.headers.get('x-switchyard-cache'),
      b.response.headers.get('x-switchyard-cache'),
    ]).toEqual(['miss', 'hit']);
    expect(b.data).toEqual(a.data);
    expect(anthropic.calls({ containing: 'm-claude' })).toBe(2);
  });

  it('Responses: a stream replayed as the same events, a whole answer as the same Response, which continues', async () => {
    const { token } = await gw.teamToken('alpha');
    const client = gw.openai(token);
    const read = async () => {
      const { data, response } = await client.responses
        .create({ model: 'cached-echo', input: 'say m-responses', stream: true })
        .withResponse();
      const events: any[] = [];
      for await (const event of data) events.push(event);
      return { header: response.headers.get('x-switchyard-cache'), events };
    };
    const first = await read();
    const second = await read();
    expect([first.header, second.header]).toEqual(['miss', 'hit']);
    expect(second.events).toEqual(first.events);
    expect(second.events.at(-1).type).toBe('response.completed');

    const whole = { model: 'cached-echo', input: 'say m-responses' };
    const a = await client.responses.create(whole).withResponse();
    const b = await client.responses.create(whole).withResponse();
    expect(b.response.headers.get('x-switchyard-cache')).toBe('hit');
    expect(b.data).toEqual(a.data);
    expect(openai.calls({ containing: 'm-responses' })).toBe(2);
    // The replayed id is the stored response of the first request: a conversation continues from it.
    const next = await client.responses.create({
      model: 'cached-echo',
      input: 'and m-next',
      previous_response_id: b.data.id,
    });
    expect(next.output_text).toBe('echo: and m-next');
  });

  it('embeddings are cached too', async () => {
    const { token } = await gw.teamToken('alpha');
    const client = gw.openai(token);
    const request = { model: 'cached-embedder', input: 'm-embed' };
    const first = await client.embeddings.create(request).withResponse();
    const second = await client.embeddings.create(request).withResponse();
    expect([
      first.response.headers.get('x-switchyard-cache'),
      second.response.headers.get('x-switchyard-cache'),
    ]).toEqual(['miss', 'hit']);
    expect(second.data).toEqual(first.data);
    expect(openai.calls({ path: '/v1/embeddings', containing: 'm-embed' })).toBe(1);
  });
});
