import { costInNanos, worstCaseNanos } from '../../src/billing/cost';

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
