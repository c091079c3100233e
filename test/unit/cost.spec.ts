import { costInNanos, costWithoutCacheNanos, tokenClasses, worstCaseNanos } from '../../src/billing/cost';

/**
 * Cost arithmetic. Expected values are worked out by hand from the prices (per million tokens = micro-units per
 * token = 1000 nano-units per token), never read back from the gateway.
 */
describe('costInNanos', () => {
  const price = { input: 3, output: 15, cachedInput: 0.3, reasoning: 20 };
  const tokens = (over: Partial<Parameters<typeof costInNanos>[0]>) => ({
    prompt: 0,
    cached: 0,
    completion: 0,
    reasoning: 0,
    ...over,
  });

  it('bills each kind of token once at its own price: reasoning is part of completion, cached part of prompt', () => {
    // 1000 prompt (200 of them cached), 500 completion (100 of them reasoning):
    // 800*3 + 200*0.3 + 400*15 + 100*20 = 2400 + 60 + 6000 + 2000 = 10460 micro = 10,460,000 nano
    expect(costInNanos(tokens({ prompt: 1000, cached: 200, completion: 500, reasoning: 100 }), price)).toBe(
      10_460_000,
    );
  });

  it('a long-context tier prices the whole request once its prompt is above the threshold, not at it', () => {
    const tiered = { input: 3, output: 15, longContext: { above: 1000, input: 6, output: 22.5 } };
    // at the threshold: 1000*3 + 10*15 = 3150 micro
    expect(costInNanos(tokens({ prompt: 1000, completion: 10 }), tiered)).toBe(3_150_000);
    // one above: every token at the tier, 1001*6 + 10*22.5 = 6231 micro
    expect(costInNanos(tokens({ prompt: 1001, completion: 10 }), tiered)).toBe(6_231_000);
    // the reservation takes the tier the same way: 1001*6 + 100*22.5 = 8256 micro
    expect(worstCaseNanos(1001, 100, tiered)).toBe(8_256_000);
    expect(worstCaseNanos(1000, 100, tiered)).toBe(4_500_000);
  });

  it('prices missing a cached or reasoning price fall back to input and output', () => {
    const plain = { input: 2, output: 8 };
    // (1000 prompt) * 2 + (500 completion) * 8 = 6000 micro, however many are cached or reasoning
    expect(costInNanos(tokens({ prompt: 1000, cached: 200, completion: 500, reasoning: 100 }), plain)).toBe(
      6_000_000,
    );
  });

  describe('by class: uncached input, cache reads, 5-minute and 1-hour cache writes, output', () => {
    const claude = { input: 3, output: 15, cachedInput: 0.3, cacheWrite: 3.75, cacheWrite1h: 6 };

    it('prices each class at its own price (Anthropic: reads 0.1x, 5m writes 1.25x, 1h writes 2x input)', () => {
      // 10,000 prompt = 1,000 uncached + 8,000 reads + 1,000 writes (400 of them 1h); 200 out:
      // 1000*3 + 8000*0.3 + 600*3.75 + 400*6 + 200*15 = 3000 + 2400 + 2250 + 2400 + 3000 = 13,050 micro
      const tokens = {
        prompt: 10_000,
        cached: 8000,
        cacheWrite: 1000,
        cacheWrite1h: 400,
        completion: 200,
        reasoning: 0,
      };
      expect(costInNanos(tokens, claude)).toBe(13_050_000);
      expect(tokenClasses(tokens)).toEqual({
        uncached: 1000,
        cacheRead: 8000,
        cacheWrite5m: 600,
        cacheWrite1h: 400,
        output: 200,
        reasoning: 0,
      });
    });

    it('a class with tokens and no price makes the cost unknown, never 0 nor the input price', () => {
      const noWrites = { input: 3, output: 15, cachedInput: 0.3 };
      expect(costInNanos(tokens({ prompt: 100, cacheWrite: 10 }), noWrites)).toBeUndefined();
      const no1h = { ...claude, cacheWrite1h: undefined };
      expect(costInNanos(tokens({ prompt: 100, cacheWrite: 10, cacheWrite1h: 1 }), no1h)).toBeUndefined();
      // 5-minute writes only: the 1-hour price is not needed. 90*3 + 10*3.75 = 307.5 micro
      expect(costInNanos(tokens({ prompt: 100, cacheWrite: 10 }), no1h)).toBe(307_500);
      // No writes at all: no write price needed.
      expect(costInNanos(tokens({ prompt: 100, cached: 50 }), noWrites)).toBe(165_000);
    });

    it('no class goes negative when a vendor reports more cache tokens than prompt tokens', () => {
      // reads capped at 10, then no room for writes: 10 * 0.3 = 3 micro
      expect(tokenClasses(tokens({ prompt: 10, cached: 8, cacheWrite: 5, cacheWrite1h: 9 }))).toMatchObject({
        uncached: 0,
        cacheRead: 8,
        cacheWrite5m: 0,
        cacheWrite1h: 2,
      });
      expect(costInNanos(tokens({ prompt: 10, cached: 50, cacheWrite: 5 }), claude)).toBe(3_000);
    });
  });

  it('never counts more cached tokens than prompt tokens, nor more reasoning than completion', () => {
    // cached capped at 10: 10*0.3 = 3; reasoning capped at 5: 5*20 = 100 -> 103 micro
    expect(costInNanos(tokens({ prompt: 10, cached: 50, completion: 5, reasoning: 9 }), price)).toBe(103_000);
  });

  it('a small embedding call is not rounded to nothing (nano-units), and rounds once to the nearest nano', () => {
    expect(costInNanos(tokens({ prompt: 4 }), { input: 0.02, output: 0 })).toBe(80);
    // 1 token at 0.0004 per million = 0.4 nano -> 0; 0.0006 -> 0.6 nano -> 1
    expect(costInNanos(tokens({ prompt: 1 }), { input: 0.0004, output: 0 })).toBe(0);
    expect(costInNanos(tokens({ prompt: 1 }), { input: 0.0006, output: 0 })).toBe(1);
  });

  it('costs nothing when nothing was spent, even at an unknown price; undefined for spent tokens at an unknown price', () => {
    expect(costInNanos(tokens({}), undefined)).toBe(0);
    expect(costInNanos(tokens({}), price)).toBe(0);
    expect(costInNanos(tokens({ prompt: 1 }), undefined)).toBeUndefined();
    expect(costInNanos(tokens({ completion: 1 }), undefined)).toBeUndefined();
    // Completion only (a prompt of 0 is possible for an estimate): still priced.
    expect(costInNanos(tokens({ completion: 2 }), price)).toBe(30_000);
  });
});

describe('costWithoutCacheNanos', () => {
  const claude = { input: 3, output: 15, cachedInput: 0.3, cacheWrite: 3.75, cacheWrite1h: 6 };
  const tokens = {
    prompt: 10_000,
    cached: 9_000,
    cacheWrite: 500,
    cacheWrite1h: 100,
    completion: 100,
    reasoning: 0,
  };

  it('prices every prompt token at the input price: the cost had there been no prompt cache', () => {
    expect(costWithoutCacheNanos(tokens, claude)).toBe((10_000 * 3 + 100 * 15) * 1000);
    // What the cache saved: 9,000 reads at 2.7 less, 400 5-minute writes at 0.75 more, 100 1-hour ones at 3 more.
    expect(costWithoutCacheNanos(tokens, claude)! - costInNanos(tokens, claude)!).toBe(
      (9_000 * 2.7 - 400 * 0.75 - 100 * 3) * 1000,
    );
  });

  it('at the tier the request is in (the tier counts all input, cached or not), and unknown without a price', () => {
    const tiered = { ...claude, longContext: { above: 5_000, input: 6, output: 22.5, cachedInput: 0.6 } };
    expect(costWithoutCacheNanos(tokens, tiered)).toBe((10_000 * 6 + 100 * 22.5) * 1000);
    expect(costWithoutCacheNanos(tokens, undefined)).toBeUndefined();
  });
});

describe('worstCaseNanos', () => {
  it('reserves the prompt at the input price and the completion at the dearest output price, rounded up', () => {
    // 100*3 + 50*max(15, 20) = 300 + 1000 = 1300 micro
    expect(worstCaseNanos(100, 50, { input: 3, output: 15, reasoning: 20 })).toBe(1_300_000);
    // reasoning cheaper than output: output price
    expect(worstCaseNanos(100, 50, { input: 3, output: 15, reasoning: 1 })).toBe(1_050_000);
    expect(worstCaseNanos(100, 50, { input: 3, output: 15 })).toBe(1_050_000);
    // 1 token at 0.0001 per million is 0.1 nano: rounded up, a reservation never falls short
    expect(worstCaseNanos(1, 0, { input: 0.0001, output: 0 })).toBe(1);
  });
});
