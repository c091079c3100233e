import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Anthropic from '@anthropic-ai/sdk';
import { AnthropicUpstream } from '../support/anthropic-upstream';
import { BedrockUpstream } from '../support/bedrock-upstream';
import { GeminiUpstream } from '../support/gemini-upstream';
import { OpenAIUpstream } from '../support/openai-upstream';
import {
  anthropicClasses,
  converseClasses,
  geminiClasses,
  handCost,
  openaiClasses,
  type Prices,
} from '../support/cache-classes';
import type { RecordedRequest } from '../support/standin-server';
import { startTestGateway, type TestGateway } from '../support/test-gateway';
import { waitForUsageRecord, waitForUsageRecords, waitForUsageSummary } from '../support/usage';
import { VertexUpstream } from '../support/vertex-upstream';

const AWS_KEY = {
  accessKeyId: 'AKIAPROMPTCACHE00001',
  secretAccessKey: 'prompt/Cache+Secret/Key0123456789abcdefg',
};

const CLAUDE_PRICES: Prices = { input: 3, cachedInput: 0.3, cacheWrite: 3.75, cacheWrite1h: 6, output: 15 };
const OPENAI_PRICES: Prices = { input: 2.5, cachedInput: 1.25, output: 10 };
const GEMINI_PRICES: Prices = { input: 1.25, cachedInput: 0.125, output: 10 };
const CONVERSE_PRICES: Prices = { input: 1, cachedInput: 0.1, cacheWrite: 1.25, output: 2 };

describe('prompt caching: passed through, reported in each wire, priced by class', () => {
  jest.setTimeout(30_000);
  let openai: OpenAIUpstream;
  let anthropic: AnthropicUpstream;
  let gemini: GeminiUpstream;
  let bedrock: BedrockUpstream;
  let vertex: VertexUpstream;
  let gw: TestGateway;
  let dir: string;
  const saved = { ...process.env };

  beforeAll(async () => {
    [openai, anthropic, gemini, bedrock, vertex] = await Promise.all([
      new OpenAIUpstream().start(),
      new AnthropicUpstream().start(),
      new GeminiUpstream().start(),
      new BedrockUpstream({ keys: [AWS_KEY] }).start(),
      new VertexUpstream(39).start(),
    ]);
    dir = mkdtempSync(join(tmpdir(), 'prompt-cache-'));
    process.env.AWS_ACCESS_KEY_ID = AWS_KEY.accessKeyId;
    process.env.AWS_SECRET_ACCESS_KEY = AWS_KEY.secretAccessKey;
    delete process.env.AWS_SESSION_TOKEN;
    gw = await startTestGateway({
      upstreamUrl: openai.url,
      config: {
        backends: {
          claude: { type: 'anthropic', baseUrl: anthropic.url, apiKey: '${TEST_UPSTREAM_KEY}' },
          google: { type: 'gemini', baseUrl: gemini.url, apiKey: '${TEST_UPSTREAM_KEY}' },
          aws: { type: 'bedrock', region: 'us-east-1', baseUrl: bedrock.url },
          gcp: {
            type: 'vertex',
            project: vertex.project,
            region: 'us-east5',
            baseUrl: vertex.url,
            credentialsFile: vertex.writeKeyFile(dir),
          },
        },
        models: {
          'claude-cached': {
            backend: 'claude',
            upstreamModel: 'claude-cached-900-50-30',
            price: CLAUDE_PRICES,
          },
          'claude-no-1h-price': {
            backend: 'claude',
            upstreamModel: 'claude-cached-900-50-30',
            price: { ...CLAUDE_PRICES, cacheWrite1h: undefined },
          },
          'claude-reads': {
            backend: 'claude',
            upstreamModel: 'claude-cached-100000-0-0',
            price: CLAUDE_PRICES,
          },
          'oa-cached': { backend: 'standin', upstreamModel: 'cached-800-0-0', price: OPENAI_PRICES },
          'gemini-cached': {
            backend: 'google',
            upstreamModel: 'gemini-cached-700-0-0',
            price: GEMINI_PRICES,
          },
          'converse-cached': {
            backend: 'aws',
            upstreamModel: 'meta.llama3-cached-600-40-0-v1:0',
            price: CONVERSE_PRICES,
          },
          'vertex-claude-cached': {
            backend: 'gcp',
            upstreamModel: 'claude-cached-700-60-20',
            price: CLAUDE_PRICES,
          },
          'vertex-gemini-cached': {
            backend: 'gcp',
            upstreamModel: 'gemini-cached-500-0-0',
            price: GEMINI_PRICES,
          },
          'bedrock-claude-cached': {
            backend: 'aws',
            upstreamModel: 'us.anthropic.claude-cached-500-20-10-v1:0',
            price: CLAUDE_PRICES,
          },
        },
      },
    });
  });
  afterAll(async () => {
    await gw.close();
    await Promise.all([openai.stop(), anthropic.stop(), gemini.stop(), bedrock.stop(), vertex.stop()]);
    rmSync(dir, { recursive: true, force: true });
    process.env = saved;
  });

  /** The stand-in's one request holding `marker`. */
  function sentTo(standIn: { requests: RecordedRequest[] }, marker: string): RecordedRequest {
    const sent = standIn.requests.filter((r) => r.text.includes(marker));
    expect(sent).toHaveLength(1);
    return sent[0];
  }

  async function chat(team: string, model: string, content: string, stream: boolean) {
    const { token } = await gw.teamToken(team);
    const client = gw.openai(token);
    if (!stream)
      return (await client.chat.completions.create({ model, messages: [{ role: 'user', content }] })).usage;
    const chunks = await client.chat.completions.create({
      model,
      messages: [{ role: 'user', content }],
      stream: true,
      stream_options: { include_usage: true },
    });
    let usage: unknown;
    for await (const chunk of chunks) if (chunk.usage) usage = chunk.usage;
    return usage as Record<string, any>;
  }

  describe.each([false, true])(
    'records priced by class, by hand from the vendor usage (stream: %s)',
    (stream) => {
      it.each([
        ['anthropic', 'claude-cached', () => anthropic, anthropicClasses, CLAUDE_PRICES],
        ['openai', 'oa-cached', () => openai, openaiClasses, OPENAI_PRICES],
        ['gemini', 'gemini-cached', () => gemini, geminiClasses, GEMINI_PRICES],
        ['bedrock converse', 'converse-cached', () => bedrock, converseClasses, CONVERSE_PRICES],
        ['bedrock claude', 'bedrock-claude-cached', () => bedrock, anthropicClasses, CLAUDE_PRICES],
        ['vertex claude', 'vertex-claude-cached', () => vertex, anthropicClasses, CLAUDE_PRICES],
        ['vertex gemini', 'vertex-gemini-cached', () => vertex, geminiClasses, GEMINI_PRICES],
      ] as const)('%s', async (family, model, standIn, classesOf, prices) => {
        const team = `priced-${family.replace(' ', '-')}-${stream}`;
        const marker = `priced by class ${family} ${stream}`;
        await chat(team, model, marker, stream);
        const vendor = classesOf(sentTo(standIn(), marker).usage!);
        expect(vendor.reads).toBeGreaterThan(0);
        const record = await waitForUsageRecord(gw, team);
        expect(record).toMatchObject({
          prompt_tokens: vendor.uncached + vendor.reads + vendor.writes5m + vendor.writes1h,
          cached_tokens: vendor.reads,
          cache_write_tokens: vendor.writes5m + vendor.writes1h,
          cache_write_1h_tokens: vendor.writes1h,
          completion_tokens: vendor.output,
          cost_nanos: handCost(vendor, prices),
          cost_estimated: false,
        });
        // The usage API sums the classes as the record has them.
        const { total } = await waitForUsageSummary(gw, `team=${team}`, 1);
        expect(total).toMatchObject({
          prompt_tokens: record.prompt_tokens,
          cached_tokens: vendor.reads,
          cache_write_tokens: vendor.writes5m + vendor.writes1h,
          cost_nanos: record.cost_nanos,
        });
      });
    },
  );

  it('a class with tokens and no price makes the cost unknown (null), never 0 or the input price', async () => {
    await chat('no-1h-price', 'claude-no-1h-price', 'no price for an hour', false);
    const record = await waitForUsageRecord(gw, 'no-1h-price');
    expect(record).toMatchObject({ cache_write_1h_tokens: 30, cost_nanos: null, cost: null });
    // The usage API's sums count it as a request of unknown cost, as one whose model has no price.
    const { body } = await gw.admin('GET', '/admin/v1/usage?team=no-1h-price');
    expect(body.data).toEqual([expect.objectContaining({ cost_unknown_requests: 1, cost: null })]);
  });

  describe("each client's wire shows the cache its own way, after translation", () => {
    it.each([false, true])(
      'chat completions from Anthropic: prompt_tokens is all input, cached_tokens the reads (stream: %s)',
      async (stream) => {
        const marker = `chat wire ${stream}`;
        const usage = await chat(`chat-wire-${stream}`, 'claude-cached', marker, stream);
        const vendor = anthropicClasses(sentTo(anthropic, marker).usage!);
        const prompt = vendor.uncached + 900 + 80;
        expect(usage).toEqual({
          prompt_tokens: prompt,
          completion_tokens: vendor.output,
          total_tokens: prompt + vendor.output,
          prompt_tokens_details: { cached_tokens: 900, cache_write_tokens: 80 },
        });
      },
    );

    it.each([false, true])(
      'Messages from OpenAI: input_tokens is the uncached part, cache_read_input_tokens the reads (stream: %s)',
      async (stream) => {
        const { token } = await gw.teamToken(`messages-wire-${stream}`);
        const client = new Anthropic({ apiKey: token, baseURL: gw.url, maxRetries: 0 });
        const marker = `messages wire ${stream}`;
        const params = {
          model: 'oa-cached',
          max_tokens: 50,
          messages: [{ role: 'user' as const, content: marker }],
        };
        let usage: Record<string, any>;
        if (stream) usage = (await client.messages.stream(params).finalMessage()).usage;
        else usage = (await client.messages.create(params)).usage;
        const vendor = openaiClasses(sentTo(openai, marker).usage!);
        expect(usage).toMatchObject({
          input_tokens: vendor.uncached,
          cache_read_input_tokens: 800,
          cache_creation_input_tokens: 0,
          output_tokens: vendor.output,
        });
        if (!stream)
          expect(usage.cache_creation).toEqual({
            ephemeral_5m_input_tokens: 0,
            ephemeral_1h_input_tokens: 0,
          });
      },
    );

    it('Messages from Bedrock Converse: its writes (of one lifetime) shown as 5-minute ones', async () => {
      const { token } = await gw.teamToken('messages-split');
      const client = new Anthropic({ apiKey: token, baseURL: gw.url, maxRetries: 0 });
      const message = await client.messages.create({
        model: 'converse-cached',
        max_tokens: 50,
        messages: [{ role: 'user', content: 'split converse' }],
      });
      const vendor = converseClasses(sentTo(bedrock, 'split converse').usage!);
      expect(message.usage).toMatchObject({
        input_tokens: vendor.uncached,
        cache_read_input_tokens: 600,
        cache_creation_input_tokens: 40,
        cache_creation: { ephemeral_5m_input_tokens: 40, ephemeral_1h_input_tokens: 0 },
      });
    });

    it("Messages natively on Anthropic: the usage is the vendor's own, 1h split included", async () => {
      const { token } = await gw.teamToken('messages-native');
      const client = new Anthropic({ apiKey: token, baseURL: gw.url, maxRetries: 0 });
      const message = await client.messages.create({
        model: 'claude-cached',
        max_tokens: 50,
        messages: [{ role: 'user', content: 'native usage' }],
      });
      expect(message.usage).toEqual(sentTo(anthropic, 'native usage').usage);
      const record = await waitForUsageRecord(gw, 'messages-native');
      expect(record).toMatchObject({ cached_tokens: 900, cache_write_tokens: 80, cache_write_1h_tokens: 30 });
    });

    it.each([false, true])(
      'Responses from Anthropic: input_tokens is all input, input_tokens_details breaks out reads and writes (stream: %s)',
      async (stream) => {
        const { token } = await gw.teamToken(`responses-wire-${stream}`);
        const client = gw.openai(token);
        const marker = `responses wire ${stream}`;
        let usage: Record<string, any> | null | undefined;
        if (!stream)
          usage = (await client.responses.create({ model: 'claude-cached', input: marker, store: false }))
            .usage;
        else {
          const events = await client.responses.create({
            model: 'claude-cached',
            input: marker,
            store: false,
            stream: true,
          });
          for await (const event of events)
            if (event.type === 'response.completed') usage = event.response.usage;
        }
        const vendor = anthropicClasses(sentTo(anthropic, marker).usage!);
        expect(usage).toMatchObject({
          input_tokens: vendor.uncached + 900 + 80,
          input_tokens_details: { cached_tokens: 900, cache_write_tokens: 80 },
          output_tokens: vendor.output,
        });
      },
    );
  });

  describe('cache breakpoints reach the backend', () => {
    const oneHour = { type: 'ephemeral', ttl: '1h' };
    const fiveMinutes = { type: 'ephemeral' };
    /** A chat request as SDKs that speak to Claude send it: cache_control on parts, on a message and on a tool. */
    const markedChat = (model: string, marker: string) => ({
      model,
      messages: [
        { role: 'system', content: [{ type: 'text', text: 'You are terse.', cache_control: oneHour }] },
        { role: 'user', content: 'the first turn', cache_control: oneHour },
        { role: 'assistant', content: 'noted' },
        { role: 'user', content: [{ type: 'text', text: marker, cache_control: fiveMinutes }] },
      ],
      tools: [
        {
          type: 'function',
          function: { name: 'lookup', parameters: { type: 'object', properties: {} } },
          cache_control: fiveMinutes,
        },
      ],
      tool_choice: 'none',
    });

    it('from chat completions to Anthropic, as the client wrote them', async () => {
      const { token } = await gw.teamToken('marks-anthropic');
      await gw
        .openai(token)
        .chat.completions.create(markedChat('claude-cached', 'marks to anthropic') as never);
      const body = sentTo(anthropic, 'marks to anthropic').body;
      expect(body.system).toEqual([{ type: 'text', text: 'You are terse.', cache_control: oneHour }]);
      expect(body.messages[0].content).toEqual([
        { type: 'text', text: 'the first turn', cache_control: oneHour },
      ]);
      expect(body.messages[1].content).toEqual([{ type: 'text', text: 'noted' }]);
      expect(body.messages[2].content).toEqual([
        { type: 'text', text: 'marks to anthropic', cache_control: fiveMinutes },
      ]);
      expect(body.tools[0].cache_control).toEqual(fiveMinutes);
    });

    it('from chat completions to Claude on Bedrock, as the client wrote them', async () => {
      const { token } = await gw.teamToken('marks-bedrock-claude');
      await gw
        .openai(token)
        .chat.completions.create(markedChat('bedrock-claude-cached', 'marks to bedrock') as never);
      const body = sentTo(bedrock, 'marks to bedrock').body;
      expect(body.system).toEqual([{ type: 'text', text: 'You are terse.', cache_control: oneHour }]);
      expect(body.messages[0].content[0].cache_control).toEqual(oneHour);
      expect(body.messages[2].content[0].cache_control).toEqual(fiveMinutes);
    });

    it('from chat completions to Claude on Vertex, as the client wrote them', async () => {
      const { token } = await gw.teamToken('marks-vertex-claude');
      await gw
        .openai(token)
        .chat.completions.create(markedChat('vertex-claude-cached', 'marks to vertex') as never);
      const body = sentTo(vertex, 'marks to vertex').body;
      expect(body.system).toEqual([{ type: 'text', text: 'You are terse.', cache_control: oneHour }]);
      expect(body.messages[0].content[0].cache_control).toEqual(oneHour);
      expect(body.messages[2].content[0].cache_control).toEqual(fiveMinutes);
      expect(body.tools[0].cache_control).toEqual(fiveMinutes);
    });

    it('from chat completions to Bedrock Converse, as cachePoint blocks after the marked content', async () => {
      const { token } = await gw.teamToken('marks-converse');
      await gw
        .openai(token)
        // Converse leaves its tools out for tool_choice "none" (it has no such choice): here they are offered.
        .chat.completions.create({
          ...markedChat('converse-cached', 'marks to converse'),
          tool_choice: 'auto',
        } as never);
      const body = sentTo(bedrock, 'marks to converse').body;
      expect(body.system).toEqual([{ text: 'You are terse.' }, { cachePoint: { type: 'default' } }]);
      expect(body.messages.map((m: { content: unknown }) => m.content)).toEqual([
        [{ text: 'the first turn' }, { cachePoint: { type: 'default' } }],
        [{ text: 'noted' }],
        [{ text: 'marks to converse' }, { cachePoint: { type: 'default' } }],
      ]);
      expect(body.toolConfig.tools[1]).toEqual({ cachePoint: { type: 'default' } });
    });

    it('from Responses to Anthropic, on text parts as on chat', async () => {
      const { token } = await gw.teamToken('marks-responses');
      await gw.openai(token).responses.create({
        model: 'claude-cached',
        store: false,
        input: [
          { role: 'developer', content: [{ type: 'input_text', text: 'Be terse.', cache_control: oneHour }] },
          {
            role: 'user',
            content: [{ type: 'input_text', text: 'marks from responses', cache_control: fiveMinutes }],
          },
        ],
      } as never);
      const body = sentTo(anthropic, 'marks from responses').body;
      expect(body.system).toEqual([{ type: 'text', text: 'Be terse.', cache_control: oneHour }]);
      expect(body.messages[0].content).toEqual([
        { type: 'text', text: 'marks from responses', cache_control: fiveMinutes },
      ]);
    });

    it.each([
      ['Claude on Bedrock', 'bedrock-claude-cached', () => bedrock],
      ['Claude on Vertex', 'vertex-claude-cached', () => vertex],
    ] as const)('from Responses to %s, on text parts as on chat', async (where, model, standIn) => {
      const marker = `responses marks to ${where}`;
      const { token } = await gw.teamToken(`marks-responses-${model}`);
      await gw.openai(token).responses.create({
        model,
        store: false,
        input: [
          { role: 'developer', content: [{ type: 'input_text', text: 'Be terse.', cache_control: oneHour }] },
          { role: 'user', content: [{ type: 'input_text', text: marker, cache_control: fiveMinutes }] },
        ],
      } as never);
      const body = sentTo(standIn(), marker).body;
      expect(body.system).toEqual([{ type: 'text', text: 'Be terse.', cache_control: oneHour }]);
      expect(body.messages[0].content).toEqual([{ type: 'text', text: marker, cache_control: fiveMinutes }]);
    });

    it.each([
      ['Claude on Bedrock', 'bedrock-claude-cached', () => bedrock],
      ['Claude on Vertex', 'vertex-claude-cached', () => vertex],
    ] as const)('from Messages to %s, natively: as sent', async (where, model, standIn) => {
      const marker = `messages marks to ${where}`;
      const { token } = await gw.teamToken(`marks-messages-${model}`);
      const client = new Anthropic({ apiKey: token, baseURL: gw.url, maxRetries: 0 });
      await client.messages.create({
        model,
        max_tokens: 50,
        system: [{ type: 'text', text: 'Be brief.', cache_control: { type: 'ephemeral', ttl: '1h' } }],
        messages: [
          { role: 'user', content: [{ type: 'text', text: marker, cache_control: { type: 'ephemeral' } }] },
        ],
      });
      const body = sentTo(standIn(), marker).body;
      expect(body.system).toEqual([{ type: 'text', text: 'Be brief.', cache_control: oneHour }]);
      expect(body.messages[0].content).toEqual([{ type: 'text', text: marker, cache_control: fiveMinutes }]);
    });

    it('from Messages to Anthropic, natively: the bytes as sent', async () => {
      const { token } = await gw.teamToken('marks-messages');
      const client = new Anthropic({ apiKey: token, baseURL: gw.url, maxRetries: 0 });
      await client.messages.create({
        model: 'claude-cached',
        max_tokens: 50,
        system: [{ type: 'text', text: 'Be brief.', cache_control: { type: 'ephemeral', ttl: '1h' } }],
        messages: [
          {
            role: 'user',
            content: [{ type: 'text', text: 'marks natively', cache_control: { type: 'ephemeral' } }],
          },
        ],
      });
      const body = sentTo(anthropic, 'marks natively').body;
      expect(body.system[0].cache_control).toEqual({ type: 'ephemeral', ttl: '1h' });
      expect(body.messages[0].content[0].cache_control).toEqual({ type: 'ephemeral' });
    });

    it("OpenAI's prompt_cache_key reaches an OpenAI-compatible backend", async () => {
      const { token } = await gw.teamToken('cache-key');
      await gw.openai(token).chat.completions.create({
        model: 'oa-cached',
        messages: [{ role: 'user', content: 'keyed prompt' }],
        prompt_cache_key: 'session-42',
      });
      expect(sentTo(openai, 'keyed prompt').body.prompt_cache_key).toBe('session-42');
    });

    it("OpenAI's prompt_cache_key reaches an OpenAI-compatible backend from Responses, translated to chat", async () => {
      const { token } = await gw.teamToken('cache-key-responses');
      await gw.openai(token).responses.create({
        model: 'oa-cached',
        input: 'keyed response',
        store: false,
        prompt_cache_key: 'session-43',
      });
      const sent = sentTo(openai, 'keyed response');
      expect(sent.path).toBe('/v1/chat/completions');
      expect(sent.body.prompt_cache_key).toBe('session-43');
    });
  });

  it('a budget is exhausted at the right request when most tokens are cache reads', async () => {
    // What one request costs, by hand from the stand-in's usage: 100,000 cache reads at 0.3, a few input and output
    // tokens. Billed as input (3), one request would cost ten times as much and exhaust the budget at once.
    const probe = 'budget probe';
    await chat('budget-probe', 'claude-reads', probe, false);
    const each = handCost(anthropicClasses(sentTo(anthropic, probe).usage!), CLAUDE_PRICES);
    expect(each).toBeGreaterThan(30_000_000);
    // 2.5 requests' worth: the first three are admitted (each reserving far less than half a request), the fourth
    // finds the budget spent.
    const budget = Math.floor((each * 2.5) / 1000) / 1e6; // to the micro-unit, as budgets are set
    const created = await gw.admin('POST', '/admin/v1/teams', {
      id: 'cache-budget',
      limits: { budgetPerDay: budget },
    });
    expect(created).toMatchObject({ status: 201 });
    const { token } = await gw.teamToken('cache-budget');
    const client = gw.openai(token);
    const statuses: number[] = [];
    for (let i = 0; i < 4; i++) {
      const result = await client.chat.completions
        .create({ model: 'claude-reads', max_tokens: 20, messages: [{ role: 'user', content: probe }] })
        .then(
          () => 200,
          (error: { status?: number }) => error.status ?? 0,
        );
      statuses.push(result);
      // Spend settles when the record is written: wait for it before the next request.
      await waitForUsageRecords(gw, 'cache-budget', i + 1);
    }
    expect(statuses).toEqual([200, 200, 200, 429]);
    const records = await waitForUsageRecords(gw, 'cache-budget', 4);
    const spent = records.reduce((sum, record) => sum + (record.cost_nanos ?? 0), 0);
    expect(spent).toBe(each * 3);
  });

  it('a nearly spent budget refuses a long cached prompt that would fit at the read price: its prompt is reserved at the input price', async () => {
    // One 300,000-byte word: the gateway reserves about 100,000 prompt tokens for it (a token per 3 bytes) at the
    // input price, while the stand-in bills it as one uncached word beside its 100,000 cache reads (as a vendor bills
    // a long prompt whose prefix it had cached).
    const prompt = `reserve-${'x'.repeat(300_000)}`;
    const ask = (client: ReturnType<TestGateway['openai']>) =>
      client.chat.completions.create({
        model: 'claude-reads',
        max_tokens: 20,
        messages: [{ role: 'user', content: prompt }],
      });
    // What the request reserves: a budget of one micro-unit refuses it, saying so.
    await gw.admin('POST', '/admin/v1/teams', { id: 'reserve-probe', limits: { budgetPerDay: 0.000001 } });
    const refused = await ask(gw.openai((await gw.teamToken('reserve-probe')).token)).then(
      () => ({ status: 200, message: '' }),
      (error: { status: number; message: string }) => error,
    );
    expect(refused).toMatchObject({ status: 429 });
    const reserved = Number(/may cost up to ([\d.]+) USD/.exec(refused.message)![1]);
    // The first request is admitted and settles at its cost by class, a tenth of what it reserved for its prompt.
    const budget = reserved + 0.01;
    await gw.admin('POST', '/admin/v1/teams', { id: 'reserve-near', limits: { budgetPerDay: budget } });
    const client = gw.openai((await gw.teamToken('reserve-near')).token);
    await ask(client);
    const [record] = await waitForUsageRecords(gw, 'reserve-near', 1);
    const cost = handCost(anthropicClasses(sentTo(anthropic, 'reserve-').usage!), CLAUDE_PRICES);
    expect(record.cost_nanos).toBe(cost);
    // A second would fit at what it costs (two of them are far below the budget), but not at what it reserves.
    expect(2 * cost).toBeLessThan(budget * 1e9);
    expect(cost + reserved * 1e9).toBeGreaterThan(budget * 1e9);
    await expect(ask(client)).rejects.toMatchObject({ status: 429 });
  });
});
