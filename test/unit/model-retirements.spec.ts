import { PriceBook } from '../../src/billing/price-book';
import {
  KNOWN_RETIREMENTS,
  RETIREMENT_WARNING_DAYS,
  retirementOf,
} from '../../src/billing/model-retirements';
import { AppLogger } from '../../src/common/logging/logger';
import { buildConfig, loadConfig } from '../support/config';

const TABLE = [
  {
    family: 'openai' as const,
    model: 'old-chat',
    date: '2026-10-23',
    source: 'https://vendor.example/deprecations',
  },
  {
    family: 'anthropic' as const,
    model: 'soon-sonnet',
    date: '2026-11-30',
    source: 'https://vendor.example/d',
  },
];
const TODAY = new Date('2026-11-27T12:00:00Z');

describe('known model retirements', () => {
  it('a model past its date is retired; within the warning window, retiring; later, scheduled', () => {
    expect(retirementOf('openai', 'old-chat', TODAY, TABLE)).toEqual({
      status: 'retired',
      date: '2026-10-23',
      source: 'https://vendor.example/deprecations',
    });
    expect(retirementOf('anthropic', 'soon-sonnet', TODAY, TABLE)?.status).toBe('retiring');
    // Its shutdown day itself: retired from 00:00 UTC.
    expect(retirementOf('anthropic', 'soon-sonnet', new Date('2026-11-30T00:00:00Z'), TABLE)?.status).toBe(
      'retired',
    );
    const early = new Date(Date.parse('2026-11-30T00:00:00Z') - (RETIREMENT_WARNING_DAYS + 1) * 86_400_000);
    expect(retirementOf('anthropic', 'soon-sonnet', early, TABLE)?.status).toBe('scheduled');
  });

  it("matches the id and its dated snapshots, on the vendor's own family only", () => {
    expect(retirementOf('openai', 'old-chat-2025-04-16', TODAY, TABLE)?.status).toBe('retired');
    expect(retirementOf('anthropic', 'soon-sonnet-20250929', TODAY, TABLE)?.status).toBe('retiring');
    expect(retirementOf('openai', 'old-chat-pro', TODAY, TABLE)).toBeUndefined();
    expect(retirementOf('openai', 'gpt-4o-mini', TODAY)?.date).toBe('2027-01-14');
    expect(retirementOf('openai', 'gpt-4o-2024-08-06', TODAY)?.date).toBe('2027-01-14');
    // The clouds retire on their own schedules.
    expect(retirementOf('bedrock', 'old-chat', TODAY, TABLE)).toBeUndefined();
  });

  it('every row is a real date with an https source', () => {
    for (const row of KNOWN_RETIREMENTS) {
      expect(row.date).toMatch(/^\d{4}-\d{2}-\d{2}$/);
      expect(Number.isNaN(Date.parse(row.date))).toBe(false);
      expect(row.source).toMatch(/^https:\/\//);
    }
  });

  it('the price book warns at start of a retired and of a retiring configured model, and explains both', () => {
    jest.useFakeTimers({ now: TODAY, doNotFake: ['nextTick', 'setImmediate'] });
    try {
      const lines: string[] = [];
      const logger = new AppLogger('info', { write: (line: string) => void lines.push(line) });
      const config = buildConfig(
        {
          admin: { apiKey: 'k' },
          backends: {
            openai: { type: 'openai', baseUrl: 'https://api.openai.com/v1', apiKey: 'k' },
            claude: { type: 'anthropic', baseUrl: 'https://api.anthropic.com/v1', apiKey: 'k' },
          },
          models: {
            reasoner: { backend: 'openai', upstreamModel: 'o4-mini' },
            sonnet: {
              backend: 'claude',
              upstreamModel: 'claude-sonnet-4-5',
              price: { input: 3, output: 15 },
            },
            current: { backend: 'openai', upstreamModel: 'gpt-6-luna' },
          },
          billing: { priceTable: '' },
        },
        {},
      );
      const prices = new PriceBook(config, logger);
      prices.onModuleInit();
      const warnings = lines
        .map((line) => JSON.parse(line) as { level: number; msg: string; model: string })
        .filter((line) => line.level === 40);
      expect(warnings.map((line) => [line.model, line.msg])).toEqual([
        [
          'reasoner',
          expect.stringMatching(
            /^model "reasoner" \(o4-mini on backend "openai"\) was retired by its vendor on 2026-10-23/,
          ),
        ],
        [
          'sonnet',
          expect.stringMatching(
            /^model "sonnet" \(claude-sonnet-4-5 on backend "claude"\) is retiring: .* 2026-11-30/,
          ),
        ],
      ]);
      // A configured price does not hide the retirement.
      expect(
        prices.explain({ model: 'sonnet', backend: 'claude', upstreamModel: 'claude-sonnet-4-5' }),
      ).toMatchObject({
        source: { kind: 'model' },
        deprecated: false,
        retirement: { status: 'retiring', date: '2026-11-30', source: expect.stringMatching(/^https:/) },
      });
      expect(prices.explainModel('current')?.deployments[0]).not.toHaveProperty('retirement');
    } finally {
      jest.useRealTimers();
    }
  });

  it('the shipped config names vendor models that are neither retired nor retiring, and priced', () => {
    const config = loadConfig({ SWITCHYARD_CONFIG: 'config/switchyard.yaml', SWITCHYARD_ADMIN_KEY: 'x' });
    const prices = new PriceBook(config);
    const vendorFamilies = ['openai', 'anthropic', 'gemini'];
    const checked: string[] = [];
    for (const [name, model] of Object.entries(config.models)) {
      const backend = config.backends[model.backend!];
      // The Ollama backend is an OpenAI-compatible server on this machine, not OpenAI's API.
      if (!vendorFamilies.includes(backend.type) || !/^https:\/\//.test(backend.baseUrl ?? '')) continue;
      const explained = prices.explain({
        model: name,
        backend: model.backend!,
        upstreamModel: model.upstreamModel!,
      });
      expect({
        name,
        retirement: explained.retirement?.status ?? 'none',
        deprecated: explained.deprecated,
      }).toEqual({
        name,
        retirement: expect.not.stringMatching(/^(retired|retiring)$/),
        deprecated: false,
      });
      expect({ name, priced: explained.price !== null }).toEqual({ name, priced: true });
      checked.push(name);
    }
    expect(checked.length).toBeGreaterThanOrEqual(6);
  });
});
