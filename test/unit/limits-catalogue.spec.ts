import { Writable } from 'node:stream';
import type Redis from 'ioredis';
import type { Principal } from '../../src/auth/principal';
import { AppLogger } from '../../src/common/logging/logger';
import { buildConfig } from '../support/config';
import { InFlightTracker } from '../../src/lifecycle/in-flight.tracker';
import { LIMIT_CATALOGUE, LIMIT_NAMES, type LimitName } from '../../src/limits/limit-catalogue';
import { LimitsService } from '../../src/limits/limits.service';
import { MetricsService } from '../../src/metrics/metrics.service';
import { RedisKeys } from '../../src/redis/redis-keys';

/**
 * The limits service derives everything from the catalogue: every limit, whatever its row, is checked, and
 * charged by its unit (a request counts 1, a token limit the token reservation, a budget the cost reservation in
 * nano-units). A limit added to the catalogue that the service handled by a hand-kept list would fail here.
 */
const config = buildConfig({ admin: { apiKey: 'k' } }, {});
const silent = new Writable({ write: (_chunk, _encoding, done) => done() });

/** The admission script's arguments as the service sends them, with a fake Redis that admits everything. */
async function admitWith(limits: Partial<Record<LimitName, number>>, scope: 'team' | 'token') {
  const calls: (string | number)[][] = [];
  const redis = {
    status: 'ready',
    admitLimits: (keyCount: number, ...args: (string | number)[]) => {
      calls.push([keyCount, ...args]);
      return Promise.resolve([0, ...Array<number>(keyCount).fill(0)]);
    },
  } as unknown as Redis;
  const service = new LimitsService(
    redis,
    new RedisKeys('t:'),
    config,
    new MetricsService(config, new InFlightTracker()),
    new AppLogger('silent', silent),
  );
  const principal: Principal = {
    tokenId: 'tok',
    teamId: 'team',
    models: ['*'],
    tokenModels: null,
    teamLimits: scope === 'team' ? limits : {},
    tokenLimits: scope === 'token' ? limits : {},
  };
  let estimated = 0;
  let costed = 0;
  const admission = await service.admit(
    principal,
    () => (estimated++, 700),
    'rec-1',
    60_000,
    () => (costed++, 3_000_000),
  );
  return { calls, admission, estimated, costed, hasTokenLimits: service.hasTokenLimits(principal) };
}

describe.each(['team', 'token'] as const)('every catalogue limit on a %s', (scope) => {
  it.each([...LIMIT_NAMES])('%s is checked and charged by its unit', async (name) => {
    const { unit } = LIMIT_CATALOGUE[name];
    const { calls, admission, estimated, costed, hasTokenLimits } = await admitWith({ [name]: 5 }, scope);

    expect(calls).toHaveLength(1);
    const [keyCount, ...args] = calls[0];
    expect(keyCount).toBe(1); // the limit's counter (no in-flight lease is asked for here)
    const check = args.slice(keyCount as number).slice(3);
    const expected: Record<typeof unit, (string | number)[]> = {
      concurrency: ['z', 5, 1],
      requests: ['c', 5, 1],
      tokens: ['c', 5, 700],
      cost: ['c', 5_000_000_000, 3_000_000],
    };
    expect(check.slice(0, 3)).toEqual(expected[unit]);
    expect(hasTokenLimits).toBe(unit === 'tokens');
    expect(estimated).toBe(unit === 'tokens' ? 1 : 0);
    expect(costed).toBe(unit === 'cost' ? 1 : 0);
    expect(admission.reservation !== undefined).toBe(unit === 'tokens' || unit === 'cost');
  });
});
