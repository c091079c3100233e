import { assertWithinTeamAdminBound } from '../../src/admin/team-admin-changes';
import type { GatewayException } from '../../src/core/errors/gateway.exception';
import type { Team, TeamChanges } from '../../src/teams/team.store';

const team: Team = {
  id: 'a',
  models: ['gpt-6-*', 'echo'],
  limits: { requestsPerMinute: 100, tokensPerDay: 5000 },
  ceiling: null,
  metadata: {},
  disabled: false,
  selfServiceTokens: false,
  logging: { content: null },
  responseCache: true,
  mcp: { servers: [], tools: ['*'] },
  createdAt: '',
  updatedAt: '',
};

/** The same team under a ceiling above its values: models up to `gpt-*` and `echo`, rpm 200, tpd 8000. */
const capped: Team = {
  ...team,
  ceiling: { models: ['gpt-*', 'echo'], limits: { requestsPerMinute: 200, tokensPerDay: 8000 } },
};

/** The refused field, or 'allowed' when a team-admin may make the change. */
function judge(on: Team, changes: TeamChanges): string {
  try {
    assertWithinTeamAdminBound(on, changes);
    return 'allowed';
  } catch (error) {
    const e = error as GatewayException;
    expect([e.status, e.code]).toEqual([403, 'permission_denied']);
    return String(e.param);
  }
}

describe("a team-admin's change of a team with no ceiling: its current values bound it (admin/team-admin-changes.ts)", () => {
  it.each<[string, TeamChanges, string]>([
    ['keeps or drops models', { models: ['echo'] }, 'allowed'],
    ['a glob inside a glob', { models: ['gpt-6-mini*'] }, 'allowed'],
    ['a name the team may use', { models: ['gpt-6-luna'] }, 'allowed'],
    ['a wider glob', { models: ['gpt-*'] }, 'models'],
    ['every model', { models: ['*'] }, 'models'],
    ['another model', { models: ['echo', 'claude'] }, 'models'],
    ['a lower limit and a new one', { limits: { requestsPerMinute: 99, tokensPerMinute: 10 } }, 'allowed'],
    ['the same limit', { limits: { requestsPerMinute: 100 } }, 'allowed'],
    ['a higher limit', { limits: { tokensPerDay: 5001 } }, 'limits.tokensPerDay'],
    ['a removed limit', { limits: { requestsPerMinute: null } }, 'limits.requestsPerMinute'],
    ['every limit removed', { limits: null }, 'limits'],
    ['labels', { metadata: { owner: 'x' } }, 'metadata'],
    ['disabling', { disabled: true }, 'disabled'],
    ['a ceiling', { ceiling: { limits: { requestsPerMinute: 1 } } }, 'ceiling'],
    ['letting members keep their own tokens', { selfServiceTokens: true }, 'allowed'],
    ['nothing', {}, 'allowed'],
  ])('%s', (_what, changes, expected) => {
    expect(judge(team, changes)).toBe(expected);
  });
});

describe("a team-admin's change of a team under a ceiling: anything within it, wider than today too", () => {
  it.each<[string, TeamChanges, string]>([
    ['widens models up to the ceiling glob', { models: ['gpt-*'] }, 'allowed'],
    ['a model the ceiling matches', { models: ['gpt-5', 'echo'] }, 'allowed'],
    ['a glob wider than the ceiling', { models: ['gpt*'] }, 'models'],
    ['every model', { models: ['*'] }, 'models'],
    ['a model outside the ceiling', { models: ['claude'] }, 'models'],
    ['raises a limit to the ceiling', { limits: { requestsPerMinute: 200 } }, 'allowed'],
    ['raises a limit past the ceiling', { limits: { requestsPerMinute: 201 } }, 'limits.requestsPerMinute'],
    ['raises the other one to it', { limits: { tokensPerDay: 8000 } }, 'allowed'],
    ['and past it', { limits: { tokensPerDay: 8001 } }, 'limits.tokensPerDay'],
    ['lowers a limit', { limits: { tokensPerDay: 1 } }, 'allowed'],
    ['removes a limit the ceiling has', { limits: { tokensPerDay: null } }, 'limits.tokensPerDay'],
    ['removes every limit', { limits: null }, 'limits'],
    ['adds a limit the ceiling does not have', { limits: { tokensPerMinute: 10 ** 9 } }, 'allowed'],
    ['changes the ceiling', { ceiling: { limits: { requestsPerMinute: 1000 } } }, 'ceiling'],
    ['removes the ceiling', { ceiling: null }, 'ceiling'],
  ])('%s', (_what, changes, expected) => {
    expect(judge(capped, changes)).toBe(expected);
  });

  it('bounds by the current values the part a ceiling leaves out', () => {
    const limitsOnly: Team = { ...team, ceiling: { limits: { requestsPerMinute: 200 } } };
    expect(judge(limitsOnly, { models: ['gpt-*'] })).toBe('models');
    expect(judge(limitsOnly, { models: ['gpt-6-x'] })).toBe('allowed');
    // tokensPerDay is not in the ceiling's limits: free, as the ceiling bounds only what it names.
    expect(judge(limitsOnly, { limits: { requestsPerMinute: 200, tokensPerDay: null } })).toBe('allowed');
    const modelsOnly: Team = { ...team, ceiling: { models: ['*'] } };
    expect(judge(modelsOnly, { models: ['*'] })).toBe('allowed');
    expect(judge(modelsOnly, { limits: { requestsPerMinute: 101 } })).toBe('limits.requestsPerMinute');
  });

  it('says in the refusal what bounds it', () => {
    expect(() => assertWithinTeamAdminBound(capped, { limits: { requestsPerMinute: 201 } })).toThrow(
      "201 is above the team's ceiling (200)",
    );
    expect(() => assertWithinTeamAdminBound(team, { limits: { requestsPerMinute: 101 } })).toThrow(
      "101 is above the team's current limits (100)",
    );
  });
});
