import { assertNarrowing } from '../../src/admin/team-narrowing';
import type { GatewayException } from '../../src/core/errors/gateway.exception';
import type { Team, TeamChanges } from '../../src/teams/team.store';

const team: Team = {
  id: 'a',
  models: ['gpt-6-*', 'echo'],
  limits: { requestsPerMinute: 100, tokensPerDay: 5000 },
  metadata: {},
  disabled: false,
  selfServiceTokens: false,
  createdAt: '',
  updatedAt: '',
};

/** The refused field, or 'narrower' when a team-admin may make the change. */
function judge(changes: TeamChanges): string {
  try {
    assertNarrowing(team, changes);
    return 'narrower';
  } catch (error) {
    const e = error as GatewayException;
    expect([e.status, e.code]).toEqual([403, 'permission_denied']);
    return String(e.param);
  }
}

describe("a team-admin's change of their team (admin/team-narrowing.ts)", () => {
  it.each<[string, TeamChanges, string]>([
    ['keeps or drops models', { models: ['echo'] }, 'narrower'],
    ['a glob inside a glob', { models: ['gpt-6-mini*'] }, 'narrower'],
    ['a name the team may use', { models: ['gpt-6-luna'] }, 'narrower'],
    ['a wider glob', { models: ['gpt-*'] }, 'models'],
    ['every model', { models: ['*'] }, 'models'],
    ['another model', { models: ['echo', 'claude'] }, 'models'],
    ['a lower limit and a new one', { limits: { requestsPerMinute: 99, tokensPerMinute: 10 } }, 'narrower'],
    ['the same limit', { limits: { requestsPerMinute: 100 } }, 'narrower'],
    ['a higher limit', { limits: { tokensPerDay: 5001 } }, 'limits.tokensPerDay'],
    ['a removed limit', { limits: { requestsPerMinute: null } }, 'limits.requestsPerMinute'],
    ['every limit removed', { limits: null }, 'limits'],
    ['labels', { metadata: { owner: 'x' } }, 'metadata'],
    ['disabling', { disabled: true }, 'disabled'],
    ['nothing', {}, 'narrower'],
  ])('%s', (_what, changes, expected) => {
    expect(judge(changes)).toBe(expected);
  });
});
