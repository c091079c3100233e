import { validateSync } from 'class-validator';
import { LimitSettings } from '../../src/core/limit-settings';
import { Writable } from 'node:stream';
import type { Principal } from '../../src/auth/principal';
import { AppLogger } from '../../src/common/logging/logger';
import { buildConfig } from '../support/config';
import { InFlightTracker } from '../../src/lifecycle/in-flight.tracker';
import { LIMIT_CATALOGUE, LIMIT_NAMES, type LimitName } from '../../src/core/limit-catalogue';
import { LimitsService } from '../../src/limits/limits.service';
import { MetricsService } from '../../src/metrics/metrics.service';
import { InMemoryLimitCounters } from '../support/in-memory-limit-counters';

/**
 * The limits service derives everything from the catalogue: every limit, whatever its row, is checked, and
 * charged by its unit (a request counts 1, a token limit the token reservation, a budget the cost reservation in
 * nano-units). A limit added to the catalogue that the service handled by a hand-kept list would fail here.
 */
const config = buildConfig({ admin: { apiKey: 'k' } }, {});
const silent = new Writable({ write: (_chunk, _encoding, done) => done() });

/** What the service asks the (in-memory) counters to take, for one limit. */
async function admitWith(limits: Partial<Record<LimitName, number>>, scope: 'team' | 'token') {
  const counters = new InMemoryLimitCounters();
  const service = new LimitsService(
    counters,
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
  // A tool-call limit is taken by a tool call (MCP, docs/mcp.md), never by a model request.
  if (Object.keys(limits).some((name) => LIMIT_CATALOGUE[name as LimitName].unit === 'toolCalls')) {
    const modelAdmission = await service.admit(
      principal,
      () => 700,
      'rec-0',
      60_000,
      () => 3_000_000,
    );
    expect(counters.admitted).toHaveLength(0);
    expect(modelAdmission.headers).toEqual({});
    await service.admitToolCall(principal);
    return {
      counters,
      admission: modelAdmission,
      estimated,
      costed,
      hasTokenLimits: service.hasTokenLimits(principal),
    };
  }
  const admission = await service.admit(
    principal,
    () => (estimated++, 700),
    'rec-1',
    60_000,
    () => (costed++, 3_000_000),
  );
  return { counters, admission, estimated, costed, hasTokenLimits: service.hasTokenLimits(principal) };
}

describe.each(['team', 'token'] as const)('every catalogue limit on a %s', (scope) => {
  it.each([...LIMIT_NAMES])('%s is checked and charged by its unit', async (name) => {
    const { unit } = LIMIT_CATALOGUE[name];
    const { counters, admission, estimated, costed, hasTokenLimits } = await admitWith(
      { [name]: 5000 },
      scope,
    );

    expect(counters.admitted).toHaveLength(1);
    const { takes } = counters.admitted[0];
    expect(takes).toHaveLength(1);
    const [take] = takes;
    expect(take.limit).toBe(name);
    expect(take.tokenId).toBe(scope === 'token' ? 'tok' : undefined);
    const expected: Record<typeof unit, { windowed: boolean; max: number; cost: number }> = {
      concurrency: { windowed: false, max: 5000, cost: 1 },
      requests: { windowed: true, max: 5000, cost: 1 },
      tokens: { windowed: true, max: 5000, cost: 700 },
      cost: { windowed: true, max: 5_000_000_000_000, cost: 3_000_000 },
      toolCalls: { windowed: true, max: 5000, cost: 1 },
    };
    expect({ windowed: take.window !== undefined, max: take.max, cost: take.cost }).toEqual(expected[unit]);
    expect(hasTokenLimits).toBe(unit === 'tokens');
    expect(estimated).toBe(unit === 'tokens' ? 1 : 0);
    expect(costed).toBe(unit === 'cost' ? 1 : 0);
    expect(admission.reservation !== undefined).toBe(unit === 'tokens' || unit === 'cost');
  });
});

describe('the limit settings (config and admin API bodies) come from the catalogue', () => {
  const problems = (value: Record<string, unknown>) =>
    validateSync(Object.assign(new LimitSettings(), value)).map((e) => [
      e.property,
      Object.keys(e.constraints ?? {}),
    ]);

  it.each(LIMIT_NAMES)('%s is a field, validated by its unit', (name) => {
    expect(problems({ [name]: 2 })).toEqual([]);
    expect(problems({ [name]: 0 })).toEqual([[name, ['min']]]);
    expect(problems({ [name]: 'x' })).toEqual([
      [name, LIMIT_CATALOGUE[name].unit === 'cost' ? ['max', 'min', 'isNumber'] : ['max', 'min', 'isInt']],
    ]);
    // A count is whole; money goes to the micro-unit.
    expect(problems({ [name]: 1.5 })).toEqual(
      LIMIT_CATALOGUE[name].unit === 'cost' ? [] : [[name, ['isInt']]],
    );
    expect(problems({ [name]: 1.0000001 })).toEqual([
      [name, [LIMIT_CATALOGUE[name].unit === 'cost' ? 'isNumber' : 'isInt']],
    ]);
  });

  it('a name that is not in the catalogue is no field', () => {
    expect(Object.keys(new LimitSettings())).toEqual([]);
    expect(LIMIT_NAMES).toHaveLength(8);
  });
});
