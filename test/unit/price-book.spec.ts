import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { costInNanos } from '../../src/billing/cost';
import { PriceBook } from '../../src/billing/price-book';
import { PriceData } from '../../src/billing/price-data';
import { AppLogger } from '../../src/common/logging/logger';
import { buildConfig } from '../support/config';

const BACKENDS = {
  openai: { type: 'openai', baseUrl: 'https://api.openai.com/v1', apiKey: 'k' },
  vllm: { type: 'openai', baseUrl: 'http://10.0.0.5:8000/v1' },
  claude: { type: 'anthropic', baseUrl: 'https://api.anthropic.com/v1', apiKey: 'k' },
  azure: { type: 'azure', baseUrl: 'https://contoso.openai.azure.com', apiKey: 'k' },
  gemini: { type: 'gemini', baseUrl: 'https://generativelanguage.googleapis.com/v1beta', apiKey: 'k' },
  vertex: { type: 'vertex', project: 'p', region: 'us-east5' },
  // A VPC endpoint: a base URL the price data does not know, priced under the family's provider (aws).
  bedrock: {
    type: 'bedrock',
    region: 'us-east-1',
    baseUrl: 'https://vpce-0abc.bedrock-runtime.us-east-1.vpce.amazonaws.com',
  },
  // A Private Service Connect endpoint: a base URL the price data does not know.
  'vertex-psc': {
    type: 'vertex',
    project: 'p',
    region: 'us-east5',
    baseUrl: 'https://vertex.internal.example',
  },
};

function book(models: Record<string, unknown>, billing: Record<string, unknown> = {}, logger?: AppLogger) {
  const config = buildConfig(
    { admin: { apiKey: 'k' }, backends: BACKENDS, models, billing: { priceTable: '', ...billing } },
    {},
  );
  return new PriceBook(config, logger);
}

describe('price book', () => {
  it("prices a deployment from the price data under its backend's provider, saying so", () => {
    const prices = book({ mini: { backend: 'openai', upstreamModel: 'gpt-4o-mini' } });
    const served = { model: 'mini', backend: 'openai', upstreamModel: 'gpt-4o-mini' };
    expect(prices.priceOf(served)).toEqual({ input: 0.15, output: 0.6, cachedInput: 0.075 });
    expect(prices.explain(served)).toMatchObject({
      source: {
        kind: 'price-data',
        provider: 'openai',
        model: 'gpt-4o-mini',
        data: expect.stringMatching(/^@pydantic\/genai-prices \S+ \(bundled data\)$/),
      },
      deprecated: false,
    });
  });

  it("configured figures win: the deployment's over the model's over the data", () => {
    const prices = book({
      mini: {
        deployments: [{ backend: 'openai', upstreamModel: 'gpt-4o-mini', price: { input: 1, output: 2 } }],
        price: { input: 5, output: 6 },
      },
      other: { backend: 'openai', upstreamModel: 'gpt-4o-mini', price: { input: 5, output: 6 } },
    });
    expect(prices.priceOf({ model: 'mini', backend: 'openai', upstreamModel: 'gpt-4o-mini' })).toMatchObject({
      input: 1,
      output: 2,
    });
    expect(prices.explain({ model: 'mini', backend: 'openai', upstreamModel: 'gpt-4o-mini' }).source).toEqual(
      { kind: 'deployment' },
    );
    expect(prices.priceOf({ model: 'other', backend: 'openai', upstreamModel: 'gpt-4o-mini' })).toMatchObject(
      { input: 5, output: 6 },
    );
    expect(
      prices.explain({ model: 'other', backend: 'openai', upstreamModel: 'gpt-4o-mini' }).source,
    ).toEqual({ kind: 'model' });
  });

  it("prices Vertex's versioned ids under Google's prices, at the region's endpoint or a private one", () => {
    const prices = book({
      claude: { backend: 'vertex', upstreamModel: 'claude-sonnet-4-5@20250929' },
      flash: { backend: 'vertex-psc', upstreamModel: 'gemini-2.5-flash' },
    });
    for (const served of [
      { model: 'claude', backend: 'vertex', upstreamModel: 'claude-sonnet-4-5@20250929' },
      { model: 'flash', backend: 'vertex-psc', upstreamModel: 'gemini-2.5-flash' },
    ])
      expect(prices.explain(served).source).toMatchObject({ kind: 'price-data', provider: 'google' });
    expect(
      prices.priceOf({ model: 'claude', backend: 'vertex', upstreamModel: 'claude-sonnet-4-5@20250929' }),
    ).toMatchObject({ input: 3, output: 15 });
  });

  it("prices Bedrock's model ids and cross-region inference profiles under AWS's prices", () => {
    const prices = book({
      profile: { backend: 'bedrock', upstreamModel: 'us.anthropic.claude-sonnet-4-5-20250929-v1:0' },
      llama: { backend: 'bedrock', upstreamModel: 'meta.llama3-1-70b-instruct-v1:0' },
    });
    const profile = {
      model: 'profile',
      backend: 'bedrock',
      upstreamModel: 'us.anthropic.claude-sonnet-4-5-20250929-v1:0',
    };
    const llama = { model: 'llama', backend: 'bedrock', upstreamModel: 'meta.llama3-1-70b-instruct-v1:0' };
    for (const served of [profile, llama])
      expect(prices.explain(served).source).toMatchObject({ kind: 'price-data', provider: 'aws' });
    // AWS's regional price for Claude Sonnet 4.5 (the data's `regional.` entry) and Llama 3.1 70B.
    expect(prices.priceOf(profile)).toMatchObject({ input: 3.3, output: 16.5 });
    expect(prices.priceOf(llama)).toMatchObject({ input: 0.72, output: 0.72 });
  });

  it("an Azure deployment's name is unknown until its price names the priced model; another provider can be named", () => {
    const prices = book({
      plain: { backend: 'azure', upstreamModel: 'gpt4o-prod' },
      named: { deployments: [{ backend: 'azure', upstreamModel: 'gpt4o-prod', price: { model: 'gpt-4o' } }] },
      viaAws: {
        backend: 'claude',
        upstreamModel: 'claude-sonnet-4-5',
        price: { provider: 'aws', model: 'us.anthropic.claude-sonnet-4-5-20250929-v1:0' },
      },
    });
    expect(prices.priceOf({ model: 'plain', backend: 'azure', upstreamModel: 'gpt4o-prod' })).toBeUndefined();
    expect(prices.explain({ model: 'plain', backend: 'azure', upstreamModel: 'gpt4o-prod' })).toEqual({
      price: null,
      source: null,
      deprecated: false,
      lookedUp: { provider: 'azure', model: 'gpt4o-prod' },
    });
    expect(prices.priceOf({ model: 'named', backend: 'azure', upstreamModel: 'gpt4o-prod' })).toMatchObject({
      input: 2.5,
      output: 10,
    });
    expect(
      prices.explain({ model: 'named', backend: 'azure', upstreamModel: 'gpt4o-prod' }).source,
    ).toMatchObject({ provider: 'azure' });
    const aws = prices.explain({ model: 'viaAws', backend: 'claude', upstreamModel: 'claude-sonnet-4-5' });
    expect(aws.source).toMatchObject({ kind: 'price-data', provider: 'aws' });
    expect(aws.price?.input).toBeGreaterThan(0);
  });

  it("a self-hosted OpenAI-compatible server is priced under the family's provider, and its own models stay unknown", () => {
    const prices = book({ llama: { backend: 'vllm', upstreamModel: 'meta-llama/Llama-3.1-8B-Instruct' } });
    expect(
      prices.priceOf({ model: 'llama', backend: 'vllm', upstreamModel: 'meta-llama/Llama-3.1-8B-Instruct' }),
    ).toBeUndefined();
    expect(
      prices.explain({ model: 'llama', backend: 'vllm', upstreamModel: 'meta-llama/Llama-3.1-8B-Instruct' })
        .lookedUp,
    ).toEqual({
      provider: 'openai',
      model: 'meta-llama/Llama-3.1-8B-Instruct',
    });
  });

  it('a long-context tier applies to the whole request above its threshold', () => {
    const prices = book({ sonnet: { backend: 'claude', upstreamModel: 'claude-sonnet-4-5' } });
    const price = prices.priceOf({ model: 'sonnet', backend: 'claude', upstreamModel: 'claude-sonnet-4-5' })!;
    expect(price).toMatchObject({
      input: 3,
      output: 15,
      cachedInput: 0.3,
      cacheWrite: 3.75,
      cacheWrite1h: 6,
    });
    expect(price.longContext).toMatchObject({
      above: 200_000,
      input: 6,
      output: 22.5,
      cachedInput: 0.6,
      cacheWrite: 7.5,
      cacheWrite1h: 12,
    });
    const cost = (prompt: number) =>
      costInNanos({ prompt, cached: 0, completion: 1000, reasoning: 0 }, price);
    expect(cost(200_000)).toBe((200_000 * 3 + 1000 * 15) * 1000);
    expect(cost(200_001)).toBe((200_001 * 6 + 1000 * 22.5) * 1000);
  });

  it('a long-context request is tiered by all its input (cache reads and writes too), every class at the tier', () => {
    const prices = book({ sonnet: { backend: 'claude', upstreamModel: 'claude-sonnet-4-5' } });
    const price = prices.priceOf({ model: 'sonnet', backend: 'claude', upstreamModel: 'claude-sonnet-4-5' })!;
    // 10 uncached + 199,990 reads + 1 one-hour write = 200,001 input tokens: above 200k, so 6, 0.6 and 12.
    const tokens = {
      prompt: 200_001,
      cached: 199_990,
      cacheWrite: 1,
      cacheWrite1h: 1,
      completion: 100,
      reasoning: 0,
    };
    expect(costInNanos(tokens, price)).toBe(Math.round((10 * 6 + 199_990 * 0.6 + 12 + 100 * 22.5) * 1000));
    // One read fewer: at the threshold, the base prices.
    const below = { ...tokens, prompt: 200_000, cached: 199_989 };
    expect(costInNanos(below, price)).toBe(Math.round((10 * 3 + 199_989 * 0.3 + 6 + 100 * 15) * 1000));
  });

  it('configured cache write prices are read beside cachedInput', () => {
    const prices = book({
      mine: {
        backend: 'claude',
        upstreamModel: 'claude-x',
        price: { input: 3, output: 15, cachedInput: 0.3, cacheWrite: 3.75, cacheWrite1h: 6 },
      },
    });
    expect(prices.priceOf({ model: 'mine', backend: 'claude', upstreamModel: 'claude-x' })).toEqual({
      input: 3,
      output: 15,
      cachedInput: 0.3,
      cacheWrite: 3.75,
      cacheWrite1h: 6,
      reasoning: undefined,
    });
  });

  it('resolves each (provider, model) once and keeps it', () => {
    const lookup = jest.spyOn(PriceData.prototype, 'lookup');
    try {
      const prices = book({
        a: { backend: 'openai', upstreamModel: 'gpt-4.1' },
        b: { backend: 'openai', upstreamModel: 'gpt-4.1' },
      });
      for (let i = 0; i < 5; i++) {
        prices.priceOf({ model: 'a', backend: 'openai', upstreamModel: 'gpt-4.1' });
        prices.priceOf({ model: 'b', backend: 'openai', upstreamModel: 'gpt-4.1' });
      }
      expect(lookup).toHaveBeenCalledTimes(1);
    } finally {
      lookup.mockRestore();
    }
  });

  it('uses a newer data file when billing.priceData names one (its provider found by base URL), and warns of deprecated models', () => {
    const dir = mkdtempSync(join(tmpdir(), 'price-data-'));
    try {
      const file = join(dir, 'data.json');
      writeFileSync(
        file,
        JSON.stringify([
          {
            id: 'openai',
            name: 'OpenAI',
            api_pattern: 'https://api\\.openai\\.com',
            models: [
              {
                id: 'gpt-4o-mini',
                match: { equals: 'gpt-4o-mini' },
                prices: { input_mtok: 9, output_mtok: 99 },
                deprecated: true,
              },
            ],
          },
        ]),
      );
      const lines: string[] = [];
      const logger = new AppLogger('info', { write: (line: string) => void lines.push(line) });
      const prices = book(
        { mini: { backend: 'openai', upstreamModel: 'gpt-4o-mini' } },
        { priceData: file },
        logger,
      );
      prices.onModuleInit();
      const explained = prices.explain({ model: 'mini', backend: 'openai', upstreamModel: 'gpt-4o-mini' });
      expect(explained).toMatchObject({
        price: { input: 9, output: 99 },
        source: {
          kind: 'price-data',
          provider: 'openai',
          model: 'gpt-4o-mini',
          data: expect.stringMatching(/data\.json \(dated \d{4}-\d{2}-\d{2}\)$/),
        },
        deprecated: true,
      });
      const logged = lines.map((line) => JSON.parse(line) as { level: number; msg: string });
      expect(logged.some((line) => line.msg.includes('data.json (dated'))).toBe(true);
      expect(logged.find((line) => line.level === 40)?.msg).toMatch(
        /model "mini" \(gpt-4o-mini on backend "openai"\) is marked deprecated/,
      );
      expect(() => book({}, { priceData: join(dir, 'missing.json') })).toThrow(
        /^billing\.priceData: cannot read .*missing\.json as genai-prices data \(ENOENT\)$/,
      );
      writeFileSync(file, 'not json');
      expect(() => book({}, { priceData: file })).toThrow(/^billing\.priceData: .* \(not JSON\)$/);
      writeFileSync(file, '{"not":"providers"}');
      expect(() => book({}, { priceData: file })).toThrow(/not genai-prices data/);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('prices nothing from the data in a billing currency other than its US dollars', () => {
    const prices = book({ mini: { backend: 'openai', upstreamModel: 'gpt-4o-mini' } }, { currency: 'EUR' });
    expect(
      prices.priceOf({ model: 'mini', backend: 'openai', upstreamModel: 'gpt-4o-mini' }),
    ).toBeUndefined();
  });

  it('config: a price is figures or a reference to the data, not both, and figures need input and output', () => {
    const load = (price: unknown) => () => book({ m: { backend: 'openai', upstreamModel: 'x', price } });
    expect(load({ provider: 'aws', model: 'amazon.nova-pro-v1:0' })).not.toThrow();
    expect(load({ model: 'gpt-4o' })).not.toThrow();
    expect(load({ model: 'gpt-4o', input: 1 })).toThrow(
      /models\.m\.price\.figuresOrReference: give either figures/,
    );
    expect(load({ input: 1 })).toThrow(/models\.m\.price\.output/);
    // Cache write prices go with a reference (or alone: the deployment's own entry), to fill in the data's.
    expect(load({ model: 'gpt-4o', cacheWrite1h: 5 })).not.toThrow();
    expect(load({ cacheWrite1h: 5 })).not.toThrow();
    expect(load({ cacheWrite: 1, input: 1 })).toThrow(/models\.m\.price\.output/);
  });

  it('config: a configured long-context tier prices the whole request above its threshold, every class at its rate', () => {
    const price = {
      input: 3,
      output: 15,
      cachedInput: 0.3,
      cacheWrite: 3.75,
      longContext: { above: 1000, input: 6, output: 22.5, cachedInput: 0.6, cacheWrite: 7.5 },
    };
    const prices = book({ m: { backend: 'claude', upstreamModel: 'claude-x', price } });
    const priced = prices.priceOf({ model: 'm', backend: 'claude', upstreamModel: 'claude-x' })!;
    expect(priced.longContext).toEqual(price.longContext);
    // 10 uncached + 980 reads + 10 writes = 1000: at the threshold, the base rates; one read more, the tier's.
    const tokens = { prompt: 1000, cached: 980, cacheWrite: 10, completion: 100, reasoning: 0 };
    expect(costInNanos(tokens, priced)).toBe(Math.round((10 * 3 + 980 * 0.3 + 10 * 3.75 + 100 * 15) * 1000));
    expect(costInNanos({ ...tokens, prompt: 1001, cached: 981 }, priced)).toBe(
      Math.round((10 * 6 + 981 * 0.6 + 10 * 7.5 + 100 * 22.5) * 1000),
    );
  });

  it('config: a long-context tier is whole (every cache class the base gives, a threshold) and not beside a reference', () => {
    const load = (price: unknown) => () => book({ m: { backend: 'claude', upstreamModel: 'x', price } });
    const tier = { above: 200_000, input: 6, output: 22.5 };
    expect(load({ input: 3, output: 15, longContext: tier })).not.toThrow();
    expect(load({ input: 3, output: 15, cachedInput: 0.3, cacheWrite1h: 6, longContext: tier })).toThrow(
      /models\.m\.price\.longContextClasses: the long-context tier needs its own cachedInput, cacheWrite1h/,
    );
    expect(load({ input: 3, output: 15, longContext: { input: 6, output: 22.5 } })).toThrow(
      /models\.m\.price\.longContext\.above/,
    );
    expect(load({ input: 3, output: 15, longContext: { ...tier, output: -1 } })).toThrow(
      /models\.m\.price\.longContext\.output/,
    );
    expect(load({ model: 'claude-sonnet-4-5', longContext: tier })).toThrow(/figuresOrReference/);
  });

  it("a price data entry with no 1-hour write price (Claude on Bedrock) takes the configured one, the rest the data's", () => {
    const upstreamModel = 'us.anthropic.claude-sonnet-4-5-20250929-v1:0';
    const bare = book({ c: { backend: 'bedrock', upstreamModel } });
    const fromData = bare.priceOf({ model: 'c', backend: 'bedrock', upstreamModel })!;
    expect(fromData.cacheWrite).toBe(4.125);
    expect(fromData.cacheWrite1h).toBeUndefined();
    const filled = book({ c: { backend: 'bedrock', upstreamModel, price: { cacheWrite1h: 6.6 } } });
    const served = { model: 'c', backend: 'bedrock', upstreamModel };
    expect(filled.priceOf(served)).toEqual({ ...fromData, cacheWrite1h: 6.6 });
    expect(filled.explain(served)).toMatchObject({
      source: { kind: 'price-data' },
      price: { cacheWrite1h: 6.6 },
    });
    // One 1-hour write and 10 uncached input tokens: unknown from the data alone, priced with the figure filled in.
    const tokens = { prompt: 11, cached: 0, cacheWrite: 1, cacheWrite1h: 1, completion: 0, reasoning: 0 };
    expect(costInNanos(tokens, fromData)).toBeUndefined();
    expect(costInNanos(tokens, filled.priceOf(served))).toBe(Math.round((10 * 3.3 + 6.6) * 1000));
  });
});
