import Anthropic from '@anthropic-ai/sdk';
import { AnthropicUpstream } from '../support/anthropic-upstream';
import {
  anthropicClasses,
  geminiClasses,
  handCost,
  type Classes,
  type Prices,
} from '../support/cache-classes';
import { GeminiUpstream } from '../support/gemini-upstream';
import { OpenAIUpstream } from '../support/openai-upstream';
import type { RecordedRequest } from '../support/standin-server';
import { startTestGateway, type TestGateway } from '../support/test-gateway';
import { waitForUsageRecord, waitForUsageSummary } from '../support/usage';

/**
 * The vendors' published rates (per million tokens), written out by hand: the gateway takes its own from the
 * embedded price data (@pydantic/genai-prices), so a wrong tier there, or in how it is read, shows here.
 */
const SONNET_45 = {
  base: { input: 3, cachedInput: 0.3, cacheWrite: 3.75, cacheWrite1h: 6, output: 15 },
  above200k: { input: 6, cachedInput: 0.6, cacheWrite: 7.5, cacheWrite1h: 12, output: 22.5 },
};
const GEMINI_25_PRO = {
  base: { input: 1.25, cachedInput: 0.125, output: 10 },
  above200k: { input: 2.5, cachedInput: 0.25, output: 15 },
};

const total = (c: Classes) => c.uncached + c.reads + c.writes5m + c.writes1h;

/**
 * Long-context tiers end to end: Claude Sonnet 4.5 and Gemini 2.5 Pro deployments priced from the embedded price
 * data, their stand-ins reporting input exactly at 200,000 tokens and one above, counted the vendors' way (Anthropic:
 * uncached + cache reads + cache writes; Gemini: promptTokenCount, cached content included). At the threshold the
 * whole request is at the base rates, above it every class is at the tier's: in the usage record, the usage API and
 * the team's budget.
 */
describe('long-context tiers: a request above 200k input tokens is priced at the tier, everywhere', () => {
  jest.setTimeout(30_000);
  let anthropic: AnthropicUpstream;
  let gemini: GeminiUpstream;
  let openai: OpenAIUpstream;
  let gw: TestGateway;

  // The stand-ins count a prompt's words as its uncached tokens: two here ("at threshold", "above threshold").
  // Anthropic: 2 uncached + 198,498 reads + 1,000 5-minute writes + 500 1-hour writes = 200,000; one read more is
  // 200,001. Without the writes (or the reads) counted, the second would stay under the threshold.
  // Gemini: 2 words + 199,998 cached = 200,000 prompt tokens; one more cached token is 200,001.
  beforeAll(async () => {
    [anthropic, gemini, openai] = await Promise.all([
      new AnthropicUpstream().start(),
      new GeminiUpstream().start(),
      new OpenAIUpstream().start(),
    ]);
    const sonnet = { provider: 'anthropic', model: 'claude-sonnet-4-5' };
    const pro = { provider: 'google', model: 'gemini-2.5-pro' };
    gw = await startTestGateway({
      upstreamUrl: openai.url,
      config: {
        backends: {
          claude: { type: 'anthropic', baseUrl: anthropic.url, apiKey: '${TEST_UPSTREAM_KEY}' },
          google: { type: 'gemini', baseUrl: gemini.url, apiKey: '${TEST_UPSTREAM_KEY}' },
        },
        models: {
          'sonnet-at': { backend: 'claude', upstreamModel: 'claude-cached-198498-1000-500', price: sonnet },
          'sonnet-above': {
            backend: 'claude',
            upstreamModel: 'claude-cached-198499-1000-500',
            price: sonnet,
          },
          'pro-at': { backend: 'google', upstreamModel: 'gemini-cached-199998-0-0', price: pro },
          'pro-above': { backend: 'google', upstreamModel: 'gemini-cached-199999-0-0', price: pro },
        },
      },
    });
  });
  afterAll(async () => {
    await gw.close();
    await Promise.all([anthropic.stop(), gemini.stop(), openai.stop()]);
  });

  function sentTo(standIn: { requests: RecordedRequest[] }, marker: string): RecordedRequest {
    const sent = standIn.requests.filter((r) => r.text.includes(marker));
    expect(sent).toHaveLength(1);
    return sent[0];
  }

  /** A team with a daily budget and a token. */
  async function budgetedTeam(team: string): Promise<string> {
    const created = await gw.admin('POST', '/admin/v1/teams', { id: team, limits: { budgetPerDay: 100 } });
    expect(created.status).toBe(201);
    return (await gw.teamToken(team)).token;
  }

  /** The record, the usage API (admin's and the team's own) and the budget all say `cost` nanos. */
  async function expectCostEverywhere(team: string, token: string, promptTokens: number, cost: number) {
    const record = await waitForUsageRecord(gw, team);
    expect(record).toMatchObject({ prompt_tokens: promptTokens, cost_nanos: cost, cost_estimated: false });
    const summary = await waitForUsageSummary(gw, `team=${team}`, 1);
    expect(summary.total).toMatchObject({ cost_nanos: cost, cost: cost / 1e9, cost_unknown_requests: 0 });
    const own = await gw.asTeam(token, 'GET', '/v1/usage');
    expect(own.body.total).toMatchObject({ cost_nanos: cost });
    const { body } = await gw.admin('GET', `/admin/v1/teams/${team}/budget`);
    expect(body.budgets[0]).toMatchObject({ budget: 'budgetPerDay', spent: cost / 1e9 });
  }

  it('the deployments are priced from the embedded price data, tier included', async () => {
    const { body } = await gw.admin('GET', '/admin/v1/prices/sonnet-above');
    expect(body.deployments[0]).toMatchObject({
      source: { kind: 'price-data', provider: 'anthropic', model: 'claude-sonnet-4-5' },
      price: { ...SONNET_45.base, longContext: { above: 200_000, ...SONNET_45.above200k } },
    });
    const pro = await gw.admin('GET', '/admin/v1/prices/pro-above');
    expect(pro.body.deployments[0]).toMatchObject({
      source: { kind: 'price-data', provider: 'google', model: 'gemini-2.5-pro' },
      price: { ...GEMINI_25_PRO.base, longContext: { above: 200_000, ...GEMINI_25_PRO.above200k } },
    });
  });

  it.each([
    ['at', 'sonnet-at', 200_000, SONNET_45.base],
    ['above', 'sonnet-above', 200_001, SONNET_45.above200k],
  ] as const)(
    'Claude Sonnet 4.5, input %s 200k (uncached + reads + writes)',
    async (side, model, input, rates: Prices) => {
      const team = `tier-sonnet-${side}`;
      const token = await budgetedTeam(team);
      const client = new Anthropic({ apiKey: token, baseURL: gw.url, maxRetries: 0 });
      const marker = `${side} threshold`;
      await client.messages.create({ model, max_tokens: 50, messages: [{ role: 'user', content: marker }] });
      const vendor = anthropicClasses(sentTo(anthropic, marker).usage!);
      expect(total(vendor)).toBe(input);
      expect(vendor.reads + vendor.uncached).toBeLessThan(200_000);
      await expectCostEverywhere(team, token, input, handCost(vendor, rates));
    },
  );

  it.each([
    ['at', 'pro-at', 200_000, GEMINI_25_PRO.base],
    ['above', 'pro-above', 200_001, GEMINI_25_PRO.above200k],
  ] as const)(
    'Gemini 2.5 Pro, prompt %s 200k (cached content included)',
    async (side, model, input, rates) => {
      const team = `tier-pro-${side}`;
      const token = await budgetedTeam(team);
      const marker = `${side} threshold`;
      await gw
        .openai(token)
        .chat.completions.create({ model, messages: [{ role: 'user', content: marker }] });
      const vendor = geminiClasses(sentTo(gemini, marker).usage!);
      expect(total(vendor)).toBe(input);
      await expectCostEverywhere(team, token, input, handCost(vendor, rates));
    },
  );
});
