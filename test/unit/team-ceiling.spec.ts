import { assertWithinTeamAdminBound } from '../../src/admin/team-admin-changes';
import type { GatewayException } from '../../src/core/errors/gateway.exception';
import { clampToCeiling, mergeCeiling } from '../../src/teams/team-ceiling';
import { TeamStore } from '../../src/teams/team.store';
import { buildConfig } from '../support/config';
import { InMemoryTeamRecords } from '../support/in-memory-team-records';

const config = buildConfig({ admin: { apiKey: 'k' } }, {});

async function refusal(work: Promise<unknown>): Promise<[number, string, string | null]> {
  try {
    await work;
  } catch (error) {
    const e = error as GatewayException;
    return [e.status, e.code, e.param];
  }
  throw new Error('not refused');
}

describe('a ceiling brings values within it (teams/team-ceiling.ts)', () => {
  it.each<[string, string[], string[], string[]]>([
    ['keeps what is within', ['gpt-6-*', 'echo'], ['gpt-*', 'echo'], ['gpt-6-*', 'echo']],
    ['narrows a wider glob to the ceiling globs it matches', ['gpt-*'], ['gpt-6-*', 'claude-*'], ['gpt-6-*']],
    ['`*` becomes the ceiling', ['*'], ['gpt-6-*', 'echo'], ['gpt-6-*', 'echo']],
    ['drops a model outside', ['echo', 'claude'], ['echo'], ['echo']],
    ['leaves nothing when nothing is within', ['claude'], ['echo'], []],
  ])('models: %s', (_what, models, ceiling, expected) => {
    expect(clampToCeiling(models, {}, { models: ceiling }).models).toEqual(expected);
  });

  it('limits: lowered to the ceiling, set where the team had none, others untouched', () => {
    expect(
      clampToCeiling(
        ['*'],
        { requestsPerMinute: 500, tokensPerDay: 10, tokensPerMinute: 7 },
        { limits: { requestsPerMinute: 100, tokensPerDay: 10, budgetPerDay: 5 } },
      ).limits,
    ).toEqual({ requestsPerMinute: 100, tokensPerMinute: 7, tokensPerDay: 10, budgetPerDay: 5 });
    expect(clampToCeiling(['*'], { requestsPerMinute: 100 }, { limits: { requestsPerMinute: 100 } })).toEqual(
      { models: ['*'], limits: { requestsPerMinute: 100 } },
    );
  });

  it('is patched: models replaced, limits merged, null drops a part, nothing left is no ceiling', () => {
    const current = { models: ['gpt-*'], limits: { requestsPerMinute: 100, tokensPerDay: 50 } };
    expect(mergeCeiling(current, { limits: { tokensPerDay: null, tokensPerMinute: 9 } })).toEqual({
      models: ['gpt-*'],
      limits: { requestsPerMinute: 100, tokensPerMinute: 9 },
    });
    expect(mergeCeiling(current, { models: null })).toEqual({ limits: current.limits });
    expect(mergeCeiling(current, { models: null, limits: null })).toBeNull();
    expect(mergeCeiling(current, null)).toBeNull();
    expect(mergeCeiling(null, { models: ['echo'] })).toEqual({ models: ['echo'] });
  });
});

describe('the team store keeps a team within its ceiling (teams/team.store.ts)', () => {
  let records: InMemoryTeamRecords;
  let store: TeamStore;
  beforeEach(() => {
    records = new InMemoryTeamRecords();
    store = new TeamStore(records, config);
  });

  it("creates a team with the ceiling's models and limits where it names none", async () => {
    const team = await store.create('a', {
      limits: { requestsPerMinute: 10 },
      ceiling: { models: ['gpt-*'], limits: { requestsPerMinute: 100, tokensPerDay: 1000 } },
    });
    expect(team).toMatchObject({
      models: ['gpt-*'],
      limits: { requestsPerMinute: 10, tokensPerDay: 1000 },
      ceiling: { models: ['gpt-*'], limits: { requestsPerMinute: 100, tokensPerDay: 1000 } },
    });
    expect((await store.create('b', {})).ceiling).toBeNull();
  });

  it('refuses a model or limit an org-admin names beyond the ceiling (400), and takes one at it', async () => {
    const ceiling = { models: ['gpt-*'], limits: { requestsPerMinute: 100 } };
    expect(await refusal(store.create('a', { models: ['*'], ceiling }))).toEqual([
      400,
      'invalid_request',
      'models',
    ]);
    expect(await refusal(store.create('a', { limits: { requestsPerMinute: 101 }, ceiling }))).toEqual([
      400,
      'invalid_request',
      'limits.requestsPerMinute',
    ]);
    await store.create('a', { models: ['gpt-*'], limits: { requestsPerMinute: 100 }, ceiling });
    expect(await refusal(store.update('a', { limits: { requestsPerMinute: null } }))).toEqual([
      400,
      'invalid_request',
      'limits.requestsPerMinute',
    ]);
    expect(await refusal(store.update('a', { limits: null }))).toEqual([
      400,
      'invalid_request',
      'limits.requestsPerMinute',
    ]);
    // Raising the ceiling in the same change makes room.
    const raised = await store.update('a', {
      models: ['*'],
      limits: { requestsPerMinute: 500 },
      ceiling: { models: ['*'], limits: { requestsPerMinute: 500 } },
    });
    expect(raised.team).toMatchObject({ models: ['*'], limits: { requestsPerMinute: 500 } });
    expect(raised.clamped).toBeNull();
  });

  it("lowers the team's values with a lowered ceiling, in the same write, and says what it lowered", async () => {
    await store.create('a', { models: ['*'], limits: { requestsPerMinute: 500, tokensPerMinute: 9 } });
    const { team, clamped } = await store.update('a', {
      ceiling: { models: ['gpt-6-*'], limits: { requestsPerMinute: 100, tokensPerDay: 50 } },
    });
    expect(team).toMatchObject({
      models: ['gpt-6-*'],
      limits: { requestsPerMinute: 100, tokensPerMinute: 9, tokensPerDay: 50 },
    });
    expect(clamped).toEqual({
      models: { from: ['*'], to: ['gpt-6-*'] },
      limits: {
        from: { requestsPerMinute: 500, tokensPerMinute: 9 },
        to: { requestsPerMinute: 100, tokensPerMinute: 9, tokensPerDay: 50 },
      },
    });
    // Removing the ceiling changes no value.
    expect(await store.update('a', { ceiling: null })).toMatchObject({
      team: { ceiling: null, models: ['gpt-6-*'] },
      clamped: null,
    });
  });

  it("checks a team-admin's change against the ceiling as written: one lowered meanwhile refuses it", async () => {
    await store.create('a', {
      limits: { requestsPerMinute: 50 },
      ceiling: { limits: { requestsPerMinute: 200 } },
    });
    // The org-admin lowers the ceiling after the team-admin's update has read the team, before it writes.
    records.afterRead = async () => {
      await store.update('a', { ceiling: { limits: { requestsPerMinute: 100 } } });
    };
    expect(
      await refusal(store.update('a', { limits: { requestsPerMinute: 150 } }, assertWithinTeamAdminBound)),
    ).toEqual([403, 'permission_denied', 'limits.requestsPerMinute']);
    expect((await store.require('a')).limits).toEqual({ requestsPerMinute: 50 });
    // Within the new ceiling it goes through.
    records.afterRead = undefined;
    const within = await store.update(
      'a',
      { limits: { requestsPerMinute: 100 } },
      assertWithinTeamAdminBound,
    );
    expect(within.team.limits).toEqual({ requestsPerMinute: 100 });
  });

  it("clamps a team-admin's value that landed between an org-admin's read and its lowering of the ceiling", async () => {
    await store.create('a', {
      limits: { requestsPerMinute: 50 },
      ceiling: { limits: { requestsPerMinute: 200 } },
    });
    records.afterRead = async () => {
      await store.update('a', { limits: { requestsPerMinute: 180 } }, assertWithinTeamAdminBound);
    };
    const { team, clamped } = await store.update('a', { ceiling: { limits: { requestsPerMinute: 100 } } });
    expect(team.limits).toEqual({ requestsPerMinute: 100 });
    expect(clamped?.limits?.from).toEqual({ requestsPerMinute: 180 });
  });
});

describe('a seeded team and its ceiling (config)', () => {
  it("refuses seed values above the seed's ceiling, naming them", () => {
    expect(() =>
      buildConfig(
        {
          admin: { apiKey: 'k' },
          teams: {
            a: {
              models: ['*'],
              limits: { requestsPerMinute: 101, tokensPerDay: 5 },
              ceiling: { models: ['gpt-*'], limits: { requestsPerMinute: 100, tokensPerDay: 5 } },
            },
          },
        },
        {},
      ),
    ).toThrow(
      /teams\.a\.models: \* not within teams\.a\.ceiling\.models[\s\S]*teams\.a\.limits\.requestsPerMinute: 101 is over teams\.a\.ceiling\.limits\.requestsPerMinute \(100\)/,
    );
    const ok = buildConfig(
      {
        admin: { apiKey: 'k' },
        teams: { a: { ceiling: { models: ['gpt-*'], limits: { tokensPerDay: 5 } } } },
      },
      {},
    );
    expect(ok.teams.a.ceiling).toEqual({ models: ['gpt-*'], limits: { tokensPerDay: 5 } });
  });

  it("seeds a team with its ceiling's models and limits where it names none", async () => {
    const seeded = buildConfig(
      {
        admin: { apiKey: 'k' },
        teams: { a: { ceiling: { models: ['gpt-*'], limits: { tokensPerDay: 5 } } } },
      },
      {},
    );
    const store = new TeamStore(new InMemoryTeamRecords(), seeded);
    await store.onApplicationBootstrap();
    expect(await store.require('a')).toMatchObject({
      models: ['gpt-*'],
      limits: { tokensPerDay: 5 },
      ceiling: { models: ['gpt-*'], limits: { tokensPerDay: 5 } },
    });
  });
});
