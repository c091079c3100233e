import { completionLimit, SAMPLING_DEFAULTS, samplingFor } from '../../src/providers/local/sampling';

describe('local model sampling', () => {
  it('without client settings or GGUF settings: the anti-loop defaults (low temperature, repeat and DRY penalties)', () => {
    expect(samplingFor({}, undefined)).toEqual({
      temperature: SAMPLING_DEFAULTS.temperature,
      topP: SAMPLING_DEFAULTS.topP,
      topK: SAMPLING_DEFAULTS.topK,
      minP: SAMPLING_DEFAULTS.minP,
      seed: undefined,
      repeatPenalty: {
        penalty: 1.1,
        lastTokens: 64,
        presencePenalty: undefined,
        frequencyPenalty: undefined,
      },
      dryRepeatPenalty: { strength: 0.8 },
    });
  });

  it("takes the GGUF's own recommended settings over the defaults", () => {
    const options = samplingFor(
      {},
      { temp: 0.6, top_p: 0.95, top_k: 20, min_p: 0, penalty_repeat: 1.05, penalty_last_n: 128 },
    );
    expect(options).toMatchObject({
      temperature: 0.6,
      topP: 0.95,
      topK: 20,
      minP: 0,
      repeatPenalty: { penalty: 1.05, lastTokens: 128 },
    });
  });

  it("takes the client's choices over both, adding no penalty it did not ask for; maps OpenAI's penalties", () => {
    const options = samplingFor(
      { temperature: 0, seed: 7, presencePenalty: 1, frequencyPenalty: -1 },
      { temp: 0.6 },
    );
    expect(options).toMatchObject({
      temperature: 0,
      seed: 7,
      repeatPenalty: { penalty: 1, presencePenalty: 0.5, frequencyPenalty: undefined },
    });
    expect(options.dryRepeatPenalty).toBeUndefined();
  });

  it('caps the completion at what the context has left, and uses the default when the client sets none', () => {
    expect(completionLimit(undefined, 512, 2048, undefined)).toBe(512);
    expect(completionLimit(100, 512, 2048, 1900)).toBe(100);
    expect(completionLimit(400, 512, 2048, 1900)).toBe(148);
    expect(completionLimit(undefined, 512, 2048, 2047)).toBe(1);
  });
});
