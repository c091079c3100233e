import { LIMIT_CATALOGUE, LIMIT_NAMES } from '../../src/core/limit-settings';
import { formatDuration, windowOf } from '../../src/limits/limit-windows';

describe('limit windows', () => {
  const at = Date.UTC(2026, 10, 21, 23, 59, 30, 250); // 2026-11-21T23:59:30.250Z

  it('are fixed UTC windows: minute, day, month, each with its reset time', () => {
    expect(windowOf('requestsPerMinute', at)).toEqual({
      id: `m${Math.floor(at / 60_000)}`,
      resetAt: Date.UTC(2026, 10, 22, 0, 0, 0),
    });
    expect(windowOf('tokensPerMinute', at).resetAt).toBe(Date.UTC(2026, 10, 22));
    expect(windowOf('tokensPerDay', at)).toEqual({ id: 'd2026-11-21', resetAt: Date.UTC(2026, 10, 22) });
    expect(windowOf('tokensPerMonth', at)).toEqual({ id: 'mo2026-11', resetAt: Date.UTC(2026, 11, 1) });
    expect(windowOf('tokensPerMonth', Date.UTC(2026, 11, 31, 12)).resetAt).toBe(Date.UTC(2027, 0, 1));
  });

  it('every limit is in the catalogue; counters have a window, concurrency has none (asking for it is an error, not a month)', () => {
    for (const name of LIMIT_NAMES) {
      const entry = LIMIT_CATALOGUE[name];
      expect(entry.flag).toMatch(/^--[a-z-]+$/);
      if (entry.unit === 'concurrency') expect(() => windowOf(name, Date.now())).toThrow(/no window/);
      else expect(windowOf(name, Date.now()).resetAt).toBeGreaterThan(Date.now());
    }
    expect(new Set(LIMIT_NAMES.map((name) => LIMIT_CATALOGUE[name].flag)).size).toBe(LIMIT_NAMES.length);
  });

  it('format reset durations the way OpenAI headers do', () => {
    expect(formatDuration(12)).toBe('12ms');
    expect(formatDuration(1000)).toBe('1s');
    expect(formatDuration(1001)).toBe('2s');
    expect(formatDuration(360_000)).toBe('6m0s');
    expect(formatDuration(3 * 3600_000 + 2 * 60_000 + 1000)).toBe('3h2m1s');
  });
});
