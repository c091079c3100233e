import Anthropic from '@anthropic-ai/sdk';
import { countTokens } from 'gpt-tokenizer'; // o200k_base, the gateway's tokenizer
import { AnthropicUpstream } from '../support/anthropic-upstream';
import { eventually } from '../support/eventually';
import { OpenAIUpstream, REASONING } from '../support/openai-upstream';
import { words } from '../support/standin-server';
import { runCli, writeConfig } from '../support/gateway-process';
import { REDIS_URL } from '../support/test-gateway';
import { startTestGateway, type TestGateway } from '../support/test-gateway';
import { waitForUsageRecords } from '../support/usage';

/** Prices per million tokens are micro-units per token (1000 nano-units): a cost is each kind of token times its price, summed. */
const nanos = (tokens: Record<string, number>, price: Record<string, number>) =>
  Math.round(Object.entries(tokens).reduce((sum, [kind, count]) => sum + count * price[kind], 0) * 1000);

describe('spend: prices, cost on every record, spend in the usage API and metrics', () => {
  let openai: OpenAIUpstream;
  let anthropic: AnthropicUpstream;
  let gw: TestGateway;

  beforeAll(async () => {
    [openai, anthropic] = await Promise.all([new OpenAIUpstream().start(), new AnthropicUpstream().start()]);
    gw = await startTestGateway({
      upstreamUrl: openai.url,
      config: {
        backends: { claude: { type: 'anthropic', baseUrl: anthropic.url, apiKey: '${TEST_UPSTREAM_KEY}' } },
        models: {
          priced: { backend: 'standin', upstreamModel: 'echo', price: { input: 2, output: 8 } },
          'priced-slow': { backend: 'standin', upstreamModel: 'slow', price: { input: 2, output: 8 } },
          'priced-reasoner': {
            backend: 'standin',
            upstreamModel: 'reasoner',
            price: { input: 1, output: 4, reasoning: 10 },
          },
          'priced-claude': {
            backend: 'claude',
            upstreamModel: 'claude-echo',
            price: { input: 3, cachedInput: 0.3, cacheWrite: 3.75, output: 15 },
          },
          'per-deployment': {
            deployments: [{ backend: 'standin', upstreamModel: 'echo', price: { input: 1, output: 1 } }],
            price: { input: 50, output: 50 },
          },
          // Priced by the price data (@pydantic/genai-prices, under the openai family's provider) by its upstream model.
          'team-mini': { backend: 'standin', upstreamModel: 'gpt-4o-mini' },
          embedder: { backend: 'standin', upstreamModel: 'text-embedding-3-small', kind: 'embedding' },
          // 22250 per million output tokens: the stand-in's 4-token answer to "a b c" costs exactly 0.089.
          'ratio-priced': { backend: 'standin', upstreamModel: 'echo', price: { input: 0, output: 22250 } },
          // Free to use (an in-house model, say): its answers cost a known 0.
          'zero-priced': { backend: 'standin', upstreamModel: 'echo', price: { input: 0, output: 0 } },
        },
      },
    });
  });
  afterAll(async () => {
    await gw.close();
    await Promise.all([openai.stop(), anthropic.stop()]);
  });

  /** Each record by the model the client asked for: records are listed newest written first, and a record
   *  waiting on the tokenizer worker (an aborted stream's estimate) can be written after a later request's. */
  async function recordsByModel(team: string, count: number): Promise<Record<string, any>> {
    return Object.fromEntries((await records(team, count)).map((record) => [record.model, record]));
  }

  const records = (team: string, count: number) => waitForUsageRecords(gw, team, count);

  it("costs plain and streamed requests to the nano-unit from the stand-in's token counts and the price", async () => {
    const { token } = await gw.teamToken('spend-plain');
    const client = gw.openai(token);
    await client.chat.completions.create({
      model: 'priced',
      messages: [{ role: 'user', content: 'one two three' }],
    });
    const stream = await client.chat.completions.create({
      model: 'priced',
      messages: [{ role: 'user', content: 'four five' }],
      stream: true,
    });
    for await (const _ of stream) void _;
    // The stand-in counts words: "one two three" is 3 prompt tokens, "echo: one two three" 4 completion tokens;
    // "four five" 2 and 3. At 2 and 8 per million: (3*2 + 4*8) and (2*2 + 3*8) thousand nano-units.
    const [streamed, plain] = await records('spend-plain', 2);
    expect(plain).toMatchObject({ stream: false, cost_nanos: 38_000, cost: 0.000038, cost_estimated: false });
    expect(streamed).toMatchObject({
      stream: true,
      cost_nanos: 28_000,
      cost: 0.000028,
      cost_estimated: false,
    });
  });

  it('prices cached prompt tokens and reasoning tokens at their own prices', async () => {
    const { token } = await gw.teamToken('spend-kinds');
    // The Anthropic stand-in reads 4 prompt tokens from its cache (and writes 2) on every answer.
    await new Anthropic({ apiKey: token, baseURL: gw.url, maxRetries: 0 }).messages.create({
      model: 'priced-claude',
      max_tokens: 50,
      messages: [{ role: 'user', content: 'hello cache' }],
    });
    await gw
      .openai(token)
      .chat.completions.create({ model: 'priced-reasoner', messages: [{ role: 'user', content: 'think' }] });
    const { 'priced-reasoner': reasoner, 'priced-claude': claude } = await recordsByModel('spend-kinds', 2);
    // "hello cache": 2 input words, plus the stand-in's 2 cache writes and 4 cache reads; "echo: hello cache" 3.
    expect(claude).toMatchObject({
      prompt_tokens: 8,
      cached_tokens: 4,
      cache_write_tokens: 2,
      cache_write_1h_tokens: 0,
      completion_tokens: 3,
    });
    expect(claude.cost_nanos).toBe(
      nanos(
        { uncached: 2, cached: 4, written: 2, completion: 3 },
        { uncached: 3, cached: 0.3, written: 3.75, completion: 15 },
      ),
    );
    // The reasoner stand-in (vLLM-like) reports "think" as 1 prompt token and its reasoning and answer words as the
    // completion, but no reasoning_tokens: the gateway counts the reasoning text itself (o200k_base).
    const reasoning = countTokens(REASONING);
    const completion = words(REASONING) + words('echo: think');
    expect(reasoner).toMatchObject({
      prompt_tokens: 1,
      completion_tokens: completion,
      reasoning_tokens: reasoning,
    });
    // Reasoning is part of the completion: priced at its own price, the rest at the output price.
    expect(reasoner.cost_nanos).toBe(
      nanos(
        { prompt: 1, answer: completion - reasoning, reasoning },
        { prompt: 1, answer: 4, reasoning: 10 },
      ),
    );
    // The reasoning split was counted by the gateway (the backend reported none): the cost says it is estimated.
    expect(reasoner.cost_estimated).toBe(true);
  });

  it("an aborted request costs what it is accounted with, flagged estimated; a deployment price wins over its model's; the price data prices known models", async () => {
    const { token } = await gw.teamToken('spend-more');
    const client = gw.openai(token);
    // Words 300 ms apart: the client leaves long before a second word could be relayed.
    openai.delayMs = 300;
    const controller = new AbortController();
    const stream = await client.chat.completions.create(
      { model: 'priced-slow', messages: [{ role: 'user', content: 'a b c d e f g h' }], stream: true },
      { signal: controller.signal },
    );
    const iterator = stream[Symbol.asyncIterator]();
    await iterator.next(); // role chunk
    await iterator.next(); // first word
    controller.abort();
    await iterator.next().catch(() => undefined);
    await client.chat.completions.create({
      model: 'per-deployment',
      messages: [{ role: 'user', content: 'x y' }],
    });
    await client.chat.completions.create({
      model: 'team-mini',
      messages: [{ role: 'user', content: 'x y z' }],
    });
    const {
      'team-mini': mini,
      'per-deployment': deployment,
      'priced-slow': aborted,
    } = await recordsByModel('spend-more', 3);
    // Accounted by the gateway's tokenizer (o200k_base): OpenAI's chat format for the prompt (3 priming, then per
    // message 3 + role + content) and the one word relayed before the client left.
    const prompt = 3 + 3 + countTokens('user') + countTokens('a b c d e f g h');
    const relayed = countTokens('echo: ');
    expect(aborted).toMatchObject({
      outcome: 'aborted',
      estimated: true,
      cost_estimated: true,
      prompt_tokens: prompt,
      completion_tokens: relayed,
    });
    expect(aborted.cost_nanos).toBe(nanos({ prompt, completion: relayed }, { prompt: 2, completion: 8 }));
    // "x y": 2 prompt and 3 answer words at the deployment's 1 and 1; "x y z": 3 and 4 at gpt-4o-mini's 0.15 and 0.6.
    expect(deployment.cost_nanos).toBe(nanos({ prompt: 2, completion: 3 }, { prompt: 1, completion: 1 }));
    expect(mini.cost_nanos).toBe(nanos({ prompt: 3, completion: 4 }, { prompt: 0.15, completion: 0.6 }));
  });

  it('embeddings cost their input tokens; a small call is not rounded away (nano-units)', async () => {
    const { token } = await gw.teamToken('spend-embeddings');
    const result = await gw
      .openai(token)
      .embeddings.create({ model: 'embedder', input: 'one two three four' });
    expect(result.usage.prompt_tokens).toBe(4);
    const [record] = await records('spend-embeddings', 1);
    // text-embedding-3-small: 0.02 per million tokens (the price data), so 4 tokens are 80 nano-units.
    expect(record).toMatchObject({
      endpoint: 'embeddings',
      cost_nanos: 80,
      cost: 0.00000008,
      cost_estimated: false,
    });
  });

  it('an unknown price is null and flagged in records, the usage API and the metrics, never 0; spend sums equal in the usage API and /metrics', async () => {
    const { token } = await gw.teamToken('spend-sums');
    const client = gw.openai(token);
    await client.chat.completions.create({
      model: 'echo',
      messages: [{ role: 'user', content: 'no price here' }],
    });
    for (const content of ['a', 'b c', 'd e f'])
      await client.chat.completions.create({ model: 'priced', messages: [{ role: 'user', content }] });
    const all = await records('spend-sums', 4);
    const unknown = all.find((record) => record.model === 'echo');
    expect(unknown).toMatchObject({ cost: null, cost_nanos: null, cost_estimated: false });
    // "a", "b c", "d e f": 6 prompt words, and 2 + 3 + 4 = 9 answer words ("echo: ..."), at 2 and 8 per million.
    const spent = nanos({ prompt: 6, completion: 9 }, { prompt: 2, completion: 8 });
    expect(spent).toBe(84_000);
    expect(all.filter((record) => record.model === 'priced').map((record) => record.cost_nanos)).toEqual([
      38_000, 28_000, 18_000,
    ]);

    const own = await gw.asTeam(token, 'GET', '/v1/usage?groupBy=model');
    expect(own.body.currency).toBe('USD');
    expect(own.body.total).toMatchObject({ cost_nanos: spent, cost: spent / 1e9, cost_unknown_requests: 1 });
    // A row whose requests all had an unknown price: its cost is unknown (null), not 0. A row mixing both (the
    // total, the day) is the priced requests' sum, with the count of unpriced ones beside it.
    expect(own.body.data.find((row: { model: string }) => row.model === 'echo')).toMatchObject({
      cost: null,
      cost_nanos: null,
      cost_unknown_requests: 1,
    });
    expect(own.body.data.find((row: { model: string }) => row.model === 'priced')).toMatchObject({
      cost: spent / 1e9,
      cost_nanos: spent,
      cost_unknown_requests: 0,
    });
    const config = writeConfig(
      `redis: { url: "${REDIS_URL}", keyPrefix: "${gw.prefix}" }\nadmin: { apiKey: "\${SWITCHYARD_ADMIN_KEY}" }\n`,
    );
    const cli = await runCli(config, ['usage', '--team', 'spend-sums', '--group-by', 'model']);
    expect(cli.code).toBe(0);
    const printed = JSON.parse(cli.stdout);
    expect(printed.data.find((row: { model: string }) => row.model === 'echo')).toMatchObject({
      cost: null,
      cost_nanos: null,
      cost_unknown_requests: 1,
    });
    expect(printed.total).toMatchObject({ cost_nanos: spent, cost_unknown_requests: 1 });

    const metrics = await (await fetch(`${gw.url}/metrics`)).text();
    const cost = Number(
      /switchyard_cost_total\{team="spend-sums",model="priced",backend="standin"\} ([\d.e-]+)/.exec(
        metrics,
      )?.[1],
    );
    expect(cost).toBeCloseTo(spent / 1e9, 9);
    expect(metrics).toMatch(/switchyard_cost_unknown_total\{team="spend-sums",model="echo"\} 1/);
  });

  it('a sum mixing a zero-priced model and an unpriced one costs a known 0 with the unpriced request flagged; unpriced alone stays null', async () => {
    const { token } = await gw.teamToken('spend-free-mix');
    const client = gw.openai(token);
    await client.chat.completions.create({
      model: 'zero-priced',
      messages: [{ role: 'user', content: 'free' }],
    });
    await client.chat.completions.create({
      model: 'echo',
      messages: [{ role: 'user', content: 'no price' }],
    });
    const all = await records('spend-free-mix', 2);
    expect(all.find((record) => record.model === 'zero-priced')).toMatchObject({ cost: 0, cost_nanos: 0 });
    expect(all.find((record) => record.model === 'echo')).toMatchObject({ cost: null, cost_nanos: null });

    // The day's row and the total hold both: the zero-priced answer's cost is known (0), the unpriced one is
    // counted beside it; reading "no spend" as "unknown" would make them null.
    const byDay = await gw.asTeam(token, 'GET', '/v1/usage?groupBy=day');
    expect(byDay.body.data).toHaveLength(1);
    for (const sum of [byDay.body.data[0], byDay.body.total])
      expect(sum).toMatchObject({ requests: 2, cost: 0, cost_nanos: 0, cost_unknown_requests: 1 });
    const byModel = await gw.asTeam(token, 'GET', '/v1/usage?groupBy=model');
    const row = (model: string) => byModel.body.data.find((r: { model: string }) => r.model === model);
    expect(row('zero-priced')).toMatchObject({ cost: 0, cost_nanos: 0, cost_unknown_requests: 0 });
    expect(row('echo')).toMatchObject({ cost: null, cost_nanos: null, cost_unknown_requests: 1 });
    const admin = await gw.admin('GET', '/admin/v1/usage?team=spend-free-mix&groupBy=day');
    expect(admin.body.total).toMatchObject({ cost: 0, cost_nanos: 0, cost_unknown_requests: 1 });
  });

  it('admins see budget use per team (admin API and CLI); a budget cannot be used with a model that has no price', async () => {
    expect(
      (
        await gw.admin('POST', '/admin/v1/teams', {
          id: 'budgeted',
          limits: { budgetPerDay: 1.5, budgetPerMonth: 20 },
        })
      ).status,
    ).toBe(201);
    const { token } = await gw.teamToken('budgeted');
    const client = gw.openai(token);
    for (const content of ['one', 'two three'])
      await client.chat.completions.create({
        model: 'priced',
        max_tokens: 10,
        messages: [{ role: 'user', content }],
      });
    const spent = (await records('budgeted', 2)).reduce((sum, record) => sum + record.cost_nanos, 0);
    const view = await eventually(async () => {
      const { body } = await gw.admin('GET', '/admin/v1/teams/budgeted/budget');
      expect(body.budgets[0].spent).toBe(spent / 1e9);
      return body;
    });
    expect(view).toMatchObject({ object: 'budget', team: 'budgeted', currency: 'USD' });
    expect(view.budgets).toEqual([
      {
        budget: 'budgetPerDay',
        limit: 1.5,
        spent: spent / 1e9,
        remaining: (1_500_000_000 - spent) / 1e9,
        used_ratio: Math.floor((spent * 1e4) / 1.5e9) / 1e4,
        resets_at: expect.stringMatching(/T00:00:00.000Z$/),
      },
      {
        budget: 'budgetPerMonth',
        limit: 20,
        spent: spent / 1e9,
        remaining: (20_000_000_000 - spent) / 1e9,
        used_ratio: Math.floor((spent * 1e4) / 20e9) / 1e4,
        resets_at: expect.stringMatching(/-01T00:00:00.000Z$/),
      },
    ]);
    const config = writeConfig(
      `redis: { url: "${REDIS_URL}", keyPrefix: "${gw.prefix}" }\nadmin: { apiKey: "\${SWITCHYARD_ADMIN_KEY}" }\n`,
    );
    const cli = await runCli(config, ['teams', 'budget', 'budgeted']);
    expect(cli.code).toBe(0);
    expect(JSON.parse(cli.stdout)).toEqual(view);
    // The budget gauge is read from Redis at scrape time (cached for metrics.quotaCacheMs).
    const metrics = await eventually(
      async () => {
        const text = await (await fetch(`${gw.url}/metrics`)).text();
        expect(text).toContain('switchyard_budget_used_ratio{team="budgeted"');
        return text;
      },
      8000,
      200,
    );
    const ratio = Number(
      /switchyard_budget_used_ratio\{team="budgeted",budget="budgetPerDay"\} ([\d.e-]+)/.exec(metrics)?.[1],
    );
    expect(ratio).toBe(view.budgets[0].used_ratio);

    const unpriced = (await client.chat.completions
      .create({ model: 'echo', messages: [{ role: 'user', content: 'x' }] })
      .catch((e: unknown) => e)) as { status: number; message: string };
    expect(unpriced.status).toBe(403);
    expect(unpriced.message).toMatch(/has a spend budget and the model has no known price/);
  });

  it("a budget's used ratio is shown to 4 decimals, rounded down, in the admin API, the CLI and the metrics (0.89, not 0.8899999999999999)", async () => {
    expect(
      (await gw.admin('POST', '/admin/v1/teams', { id: 'ratio', limits: { budgetPerDay: 0.1 } })).status,
    ).toBe(201);
    const { token } = await gw.teamToken('ratio');
    await gw.openai(token).chat.completions.create({
      model: 'ratio-priced',
      max_tokens: 4,
      messages: [{ role: 'user', content: 'a b c' }],
    });
    expect((await records('ratio', 1))[0].cost_nanos).toBe(89_000_000);
    // 0.089 / 0.1 in floating point is 0.8899999999999999; the remaining 0.1 - 0.089 is 0.011000000000000003.
    expect(0.089 / 0.1).toBe(0.8899999999999999);
    const view = await eventually(async () => {
      const { body } = await gw.admin('GET', '/admin/v1/teams/ratio/budget');
      expect(body.budgets[0].spent).toBe(0.089);
      return body;
    });
    expect(view.budgets[0]).toMatchObject({ used_ratio: 0.89, remaining: 0.011 });
    const config = writeConfig(
      `redis: { url: "${REDIS_URL}", keyPrefix: "${gw.prefix}" }\nadmin: { apiKey: "\${SWITCHYARD_ADMIN_KEY}" }\n`,
    );
    const cli = await runCli(config, ['teams', 'budget', 'ratio']);
    expect(cli.code).toBe(0);
    expect(cli.stdout).toContain('"used_ratio": 0.89,');
    expect(cli.stdout).toContain('"remaining": 0.011,');
    await eventually(
      async () => {
        const text = await (await fetch(`${gw.url}/metrics`)).text();
        expect(text).toContain('switchyard_budget_used_ratio{team="ratio",budget="budgetPerDay"} 0.89\n');
        expect(text).toContain('switchyard_quota_remaining{team="ratio",limit="budgetPerDay"} 0.011\n');
      },
      8000,
      200,
    );
  });
});
