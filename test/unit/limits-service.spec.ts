import { Writable } from 'node:stream';
import type { Principal } from '../../src/auth/principal';
import { GatewayException } from '../../src/core/errors/gateway.exception';
import { AppLogger } from '../../src/common/logging/logger';
import { buildConfig } from '../support/config';
import { InFlightTracker } from '../../src/lifecycle/in-flight.tracker';
import type { Limits } from '../../src/core/limit-settings';
import { LimitsService } from '../../src/limits/limits.service';
import { MetricsService } from '../../src/metrics/metrics.service';
import { InMemoryLimitCounters } from '../support/in-memory-limit-counters';

/**
 * LimitsService against the in-memory LimitCounters repository (no Redis): what it charges each limit, what it
 * refuses and how it says so, what it hands over for settlement, and what it does while the store is away. The
 * repository's Redis implementation runs the same contract in test/e2e/redis-scripts.e2e.spec.ts.
 */
const NOW = Date.UTC(2026, 10, 21, 10, 0, 30); // 30 s into a minute, 10 h into a day
const silent = new Writable({ write: (_chunk, _encoding, done) => done() });

function setup(overrides: Record<string, unknown> = {}) {
  const config = buildConfig({ admin: { apiKey: 'k' }, ...overrides }, {});
  const counters = new InMemoryLimitCounters();
  const metrics = new MetricsService(config, new InFlightTracker());
  const service = new LimitsService(counters, config, metrics, new AppLogger('silent', silent));
  return { service, counters, metrics };
}

const principal = (teamLimits: Limits, tokenLimits: Limits = {}): Principal => ({
  tokenId: 'tok1',
  teamId: 'alpha',
  models: ['*'],
  tokenModels: null,
  teamLimits,
  tokenLimits,
});

/** Admits with a token reservation of `tokens` and a worst-case cost of `costNanos` (null: the model has no price). */
const admit = (
  service: LimitsService,
  who: Principal,
  { tokens = 100, costNanos = 2_000_000 as number | null, recordId = 'r1' } = {},
) =>
  service.admit(
    who,
    () => tokens,
    recordId,
    30_000,
    () => costNanos ?? undefined,
  );

/** The refusal an admission throws. */
async function refusal(promise: Promise<unknown>): Promise<GatewayException> {
  const error = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(GatewayException);
  return error as GatewayException;
}

describe('LimitsService', () => {
  beforeEach(() => jest.spyOn(Date, 'now').mockReturnValue(NOW));
  afterEach(() => jest.restoreAllMocks());

  it('a principal with no limits costs no call to the store and reserves nothing', async () => {
    const { service, counters } = setup();
    const admission = await admit(service, principal({}));
    expect(counters.admitted).toHaveLength(0);
    expect(admission).toEqual({ headers: {}, concurrencyKeys: [], leaseWritten: false });
  });

  it('admits up to the limit exactly, then refuses with 429, a retry-after to the window end and the headers', async () => {
    const { service } = setup();
    const who = principal({ requestsPerMinute: 2 });
    const first = await admit(service, who, { recordId: 'a' });
    expect(first.headers).toEqual({
      'x-ratelimit-limit-requests': '2',
      'x-ratelimit-remaining-requests': '1',
      'x-ratelimit-reset-requests': '30s',
    });
    await admit(service, who, { recordId: 'b' });
    const refused = await refusal(admit(service, who, { recordId: 'c' }));
    expect(refused.status).toBe(429);
    expect(refused.code).toBe('rate_limit_exceeded');
    expect(refused.message).toBe(
      'requestsPerMinute limit of team "alpha" reached (2/2 requests used); it resets at 2026-11-21T10:01:00.000Z (in 30s).',
    );
    expect(refused.headers).toMatchObject({ 'retry-after': '30', 'x-ratelimit-remaining-requests': '0' });
  });

  it('takes all or nothing: a token limit that refuses leaves the team counter untouched', async () => {
    const { service, counters } = setup();
    const who = principal({ tokensPerDay: 10_000 }, { tokensPerMinute: 150 });
    await admit(service, who, { tokens: 100, recordId: 'a' });
    const refused = await refusal(admit(service, who, { tokens: 100, recordId: 'b' }));
    expect(refused.code).toBe('rate_limit_exceeded');
    expect(refused.message).toContain('tokensPerMinute limit of token tok1 reached (100/150 tokens used');
    expect([...counters.counters.values()]).toEqual([100, 100]); // the team's day counter was not charged again
  });

  it('the headers describe the tightest limit of each family', async () => {
    const { service } = setup();
    const admission = await admit(service, principal({ tokensPerMinute: 1000, tokensPerDay: 300 }), {
      tokens: 100,
    });
    expect(admission.headers['x-ratelimit-limit-tokens']).toBe('300');
    expect(admission.headers['x-ratelimit-remaining-tokens']).toBe('200');
    expect(admission.headers['x-ratelimit-reset-tokens']).toBe('13h59m30s');
    expect(admission.headers['x-ratelimit-limit-requests']).toBeUndefined();
  });

  it('a request that alone reserves more than a token limit is told to lower max_tokens, with no retry-after', async () => {
    const { service } = setup();
    const refused = await refusal(admit(service, principal({ tokensPerDay: 50 }), { tokens: 80 }));
    expect(refused.code).toBe('quota_exceeded');
    expect(refused.message).toBe(
      'This request reserves 80 tokens, more than the tokensPerDay limit of team "alpha" (50) allows; lower max_tokens.',
    );
    expect(refused.headers['retry-after']).toBeUndefined();
  });

  it('estimates tokens only for a token limit and cost only for a budget', async () => {
    const { service } = setup();
    const asked: string[] = [];
    const ask = (who: Principal) =>
      service.admit(
        who,
        () => (asked.push('tokens'), 1),
        'r',
        30_000,
        () => (asked.push('cost'), 1),
      );
    await ask(principal({ requestsPerMinute: 5, concurrentRequests: 5 }));
    expect(asked).toEqual([]);
    await ask(principal({}, { tokensPerMinute: 5 }));
    expect(asked).toEqual(['tokens']);
    await ask(principal({ budgetPerDay: 1 }));
    expect(asked).toEqual(['tokens', 'cost']);
  });

  describe('budgets', () => {
    it('charge the worst-case cost in nano-units against a limit set in the currency', async () => {
      const { service, counters } = setup();
      await admit(service, principal({ budgetPerDay: 0.5 }), { costNanos: 200_000_000 });
      expect(counters.admitted[0].takes[0]).toMatchObject({ max: 500_000_000, cost: 200_000_000 });
    });

    it('refuse a model with no price rather than let spend through uncounted', async () => {
      const { service, counters } = setup();
      const refused = await refusal(
        admit(service, principal({}, { budgetPerMonth: 5 }), { costNanos: null }),
      );
      expect(refused.code).toBe('permission_denied');
      expect(refused.message).toMatch(/^This token has a spend budget and the model has no known price/);
      const team = await refusal(admit(service, principal({ budgetPerDay: 5 }), { costNanos: null }));
      expect(team.message).toMatch(/^This team \("alpha"\) has a spend budget/);
      expect(counters.admitted).toHaveLength(0);
    });

    it('say what was spent in the currency when full, and what one request may cost when it is too much alone', async () => {
      const { service } = setup();
      const who = principal({ budgetPerDay: 0.005 });
      await admit(service, who, { costNanos: 4_000_000, recordId: 'a' });
      const full = await refusal(admit(service, who, { costNanos: 2_000_000, recordId: 'b' }));
      expect(full.code).toBe('budget_exceeded');
      expect(full.message).toBe(
        'budgetPerDay of team "alpha" reached (0.004 USD of 0.005 USD spent, this request may cost up to 0.002 USD); it resets at 2026-11-22T00:00:00.000Z (in 13h59m30s).',
      );
      expect(full.headers['retry-after']).toBe(String(14 * 3600 - 30));
      const alone = await refusal(admit(service, who, { costNanos: 9_000_000, recordId: 'c' }));
      expect(alone.message).toBe(
        'This request may cost up to 0.009 USD, more than the budgetPerDay of team "alpha" (0.005 USD); lower max_tokens.',
      );
    });
  });

  describe('concurrency', () => {
    it('takes a lease per request, refuses past the limit with retry-after 1, and a lease expires if not renewed', async () => {
      const { service } = setup();
      const who = principal({ concurrentRequests: 1 });
      const first = await admit(service, who, { recordId: 'a' });
      expect(first.concurrencyKeys).toHaveLength(1);
      expect(first.reservation).toBeUndefined();
      const refused = await refusal(admit(service, who, { recordId: 'b' }));
      expect(refused.message).toBe(
        'concurrentRequests limit of team "alpha" reached (1/1 requests in flight); retry when one ends.',
      );
      expect(refused.headers['retry-after']).toBe('1');
      (Date.now as jest.Mock).mockReturnValue(NOW + 30_000); // the first lease was never renewed
      expect((await admit(service, who, { recordId: 'c' })).concurrencyKeys).toEqual(first.concurrencyKeys);
    });

    it('a refusal is counted in the rejections metric by limit', async () => {
      const { service, metrics } = setup();
      const who = principal({}, { concurrentRequests: 1 });
      await admit(service, who, { recordId: 'a' });
      await refusal(admit(service, who, { recordId: 'b' }));
      const values = (await metrics.registry.getSingleMetric('switchyard_limit_rejections_total')!.get())
        .values;
      expect(values).toEqual([
        expect.objectContaining({
          value: 1,
          labels: expect.objectContaining({ limit: 'concurrentRequests' }),
        }),
      ]);
    });
  });

  describe('the in-flight lease', () => {
    it('is written by the admission, told whether the request reserves and which lease sets hold it', async () => {
      const { service, counters } = setup();
      const told: Array<[boolean, string[]]> = [];
      const admission = await service.admit(
        principal({ concurrentRequests: 3, tokensPerMinute: 1000 }),
        () => 10,
        'r1',
        30_000,
        undefined,
        { key: 'inflight-alpha', value: (reserves, sets) => (told.push([reserves, sets]), 'lease-json') },
      );
      expect(admission.leaseWritten).toBe(true);
      expect(told).toEqual([[true, admission.concurrencyKeys]]);
      expect(counters.inflight.get('inflight-alpha')?.get('r1')).toBe('lease-json');
    });

    it('reserves nothing with only request and concurrency limits', async () => {
      const { service } = setup();
      const told: boolean[] = [];
      await service.admit(
        principal({ requestsPerMinute: 3, concurrentRequests: 3 }),
        () => 10,
        'r1',
        30_000,
        undefined,
        {
          key: 'k',
          value: (reserves) => (told.push(reserves), ''),
        },
      );
      expect(told).toEqual([false]);
    });
  });

  describe('settlement', () => {
    it('moves each reserved counter to what the request really used and cost', async () => {
      const { service, counters } = setup();
      const who = principal({ tokensPerMinute: 10_000, budgetPerDay: 1 }, { tokensPerDay: 10_000 });
      const { reservation } = await admit(service, who, { tokens: 1000, costNanos: 50_000 });
      const { keys, deltas } = service.settlement(reservation, 240, 12_000);
      expect(deltas).toEqual([-760, -38_000, -760]); // team tpm, team budget, token tpd (catalogue order per scope)
      counters.settle(keys, deltas);
      expect([...counters.counters.values()]).toEqual([240, 12_000, 240]);
    });

    it('a cost unknown at the end keeps what was reserved on the budget; tokens still settle', async () => {
      const { service } = setup();
      const { reservation } = await admit(service, principal({ tokensPerMinute: 10_000, budgetPerDay: 1 }), {
        tokens: 1000,
        costNanos: 50_000,
      });
      expect(service.settlement(reservation, 10, null).deltas).toEqual([-990, 0]);
      expect(service.settlement(reservation, 1500, 0).deltas).toEqual([500, -50_000]); // a free model is a real cost
    });

    it('nothing reserved: nothing to settle', async () => {
      const { service } = setup();
      const { reservation } = await admit(service, principal({ requestsPerMinute: 5 }));
      expect(reservation).toBeUndefined();
      expect(service.settlement(reservation, 500, 100)).toEqual({ keys: [], deltas: [] });
    });
  });

  describe('while the store cannot be reached', () => {
    it('fail-open (the default) admits without a check, and counts it', async () => {
      const { service, counters, metrics } = setup();
      counters.ready = false;
      const admission = await admit(service, principal({ requestsPerMinute: 1 }));
      expect(admission).toEqual({ headers: {}, concurrencyKeys: [], leaseWritten: false });
      expect(counters.admitted).toHaveLength(0); // not even tried: an outage costs the request nothing
      counters.ready = true;
      counters.failWith = new Error('Command timed out');
      await admit(service, principal({ requestsPerMinute: 1 }));
      const unchecked = await metrics.registry.getSingleMetric('switchyard_limits_unchecked_total')!.get();
      expect(unchecked.values[0].value).toBe(2);
    });

    it('fail-closed answers 503 limits_unavailable', async () => {
      const { service, counters } = setup({ redis: { onOutage: 'fail-closed' } });
      counters.ready = false;
      const refused = await refusal(admit(service, principal({ requestsPerMinute: 1 })));
      expect(refused.code).toBe('limits_unavailable');
      expect(refused.status).toBe(503);
    });
  });
});
