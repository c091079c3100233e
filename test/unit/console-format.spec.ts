import { describeLimits, formatCost, formatMoney, limitLabel, spendOf } from '../../src/console/web/format';
import { limitChanges, metadataChanges } from '../../src/console/web/limits-form';
import { LIMIT_NAMES } from '../../src/core/limit-catalogue';

/** How the console writes money and limits, and what its team form sends (src/console/web). */
describe('console formatting', () => {
  it('a spend with no price is unknown (null, no point on a chart), never $0; a partly priced one is its priced part', () => {
    const row = (requests: number, cost_nanos: number | null, cost_unknown_requests: number) => ({
      requests,
      cost_nanos,
      cost_unknown_requests,
    });
    expect(spendOf([row(3, null, 3)])).toBeNull();
    expect(spendOf([row(3, null, 3), row(2, null, 2)])).toBeNull(); // two teams, neither priced
    expect(spendOf([row(3, null, 3), row(2, 4_000, 0)])).toBe(0.000004);
    expect(spendOf([row(2, 1_500_000_000, 1)])).toBe(1.5);
    expect(spendOf([])).toBe(0); // a day without requests cost nothing
    expect(formatCost(null, 'USD', 3, 3)).toBe('unpriced');
  });

  it.each([
    [0, 'USD', '$0.00'],
    [0.000038, 'USD', '$0.000038'],
    [0.0000376, 'USD', '$0.000038'],
    [0.004, 'USD', '$0.004'],
    [0.42, 'USD', '$0.42'],
    [12.5, 'USD', '$12.50'],
    [1234.5, 'USD', '$1,234.50'],
    [1234.5, 'EUR', '€1,234.50'],
    [1234.5, 'JPY', '¥1,235'],
    [0.3, 'JPY', '¥0.3'],
    [0.000001, 'XYZ', 'XYZ 0.000001'],
  ])('%s %s is written %s', (amount, currency, written) => {
    // Intl may put a no-break space between an unknown code and the number.
    expect(formatMoney(amount, currency).replace(/\u00a0/g, ' ')).toBe(written);
  });

  it('writes a cost in nano-units, and says so when some or all requests had no price', () => {
    expect(formatCost(38_000, 'USD')).toBe('$0.000038');
    expect(formatCost(38_000, 'USD', 2, 5)).toBe('$0.000038 + 2 unpriced');
    expect(formatCost(0, 'USD', 5, 5)).toBe('unpriced');
    expect(formatCost(null, 'USD')).toBe('-');
  });

  it('names every limit of the catalogue for people, and writes budgets as money', () => {
    expect(Object.fromEntries(LIMIT_NAMES.map((name) => [name, limitLabel(name)]))).toEqual({
      concurrentRequests: 'Concurrent requests',
      requestsPerMinute: 'Requests / minute',
      tokensPerMinute: 'Tokens / minute',
      tokensPerDay: 'Tokens / day',
      tokensPerMonth: 'Tokens / month',
      budgetPerDay: 'Budget / day',
      budgetPerMonth: 'Budget / month',
      toolCallsPerMinute: 'Tool calls / minute',
    });
    expect(limitLabel('notALimit')).toBe('notALimit');
    expect(describeLimits({ budgetPerDay: 5, tokensPerDay: 100_000, requestsPerMinute: 60 }, 'USD')).toEqual([
      'Requests / minute: 60',
      'Tokens / day: 100,000',
      'Budget / day: $5.00',
    ]);
  });
});

describe("the team form's limit changes", () => {
  const form = (values: Record<string, string>) => {
    const fields = new FormData();
    for (const name of LIMIT_NAMES) fields.set(name, values[name] ?? '');
    return fields;
  };
  const before = { tokensPerDay: 100_000, requestsPerMinute: 60, budgetPerMonth: 20 };
  const unchanged = { tokensPerDay: '100000', requestsPerMinute: '60', budgetPerMonth: '20' };

  it('names only the limits changed: a new value, or null for one emptied', () => {
    expect(
      limitChanges(form({ ...unchanged, tokensPerMinute: '500', requestsPerMinute: '' }), before),
    ).toEqual({ tokensPerMinute: 500, requestsPerMinute: null });
    expect(limitChanges(form({ ...unchanged, budgetPerMonth: ' 20.5 ' }), before)).toEqual({
      budgetPerMonth: 20.5,
    });
  });

  it('is undefined when nothing changed (the same number written another way included)', () => {
    expect(limitChanges(form(unchanged), before)).toBeUndefined();
    expect(limitChanges(form({ ...unchanged, budgetPerMonth: '20.0' }), before)).toBeUndefined();
  });
});

describe("the team form's metadata changes", () => {
  it('are a merge patch: labels added or changed with their value, removed ones null, none when equal', () => {
    expect(metadataChanges({ owner: 'ml', tier: 'gold' }, { owner: 'research', cost: 'c1' })).toEqual({
      owner: 'research',
      cost: 'c1',
      tier: null,
    });
    expect(metadataChanges({ owner: 'ml', tier: 'gold' }, { tier: 'gold', owner: 'ml' })).toBeUndefined();
    expect(metadataChanges({}, {})).toBeUndefined();
  });
});
