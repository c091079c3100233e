import type { AuditLog } from '../../src/audit/audit.log';
import type { CredentialCache } from '../../src/auth/credential.cache';
import { TokenStore } from '../../src/auth/token.store';
import { AccessAdminService } from '../../src/admin/access-admin.service';
import { OwnTeamTokensService } from '../../src/admin/own-team-tokens.service';
import type { TeamMembersService } from '../../src/admin/team-members.service';
import { GatewayException } from '../../src/core/errors/gateway.exception';
import type { Team, TeamStore } from '../../src/teams/team.store';
import { InMemoryTokenRecords } from '../support/in-memory-token-records';

const mia = { subject: 'idp|mia', email: 'mia@example.com' };
const noah = { subject: 'idp|noah' };
const by = { actor: 'console:mia@example.com', person: mia };

/** Two teams: `open` may use `echo` and `slow`, `other` anything. */
const teams = {
  async require(id: string): Promise<Team> {
    if (id !== 'open' && id !== 'other') throw new GatewayException('team_not_found', `no team ${id}`);
    return { id, models: id === 'open' ? ['echo', 'slow'] : ['*'] } as Team;
  },
} as unknown as TeamStore;

async function codeOf(promise: Promise<unknown>): Promise<string> {
  try {
    await promise;
    return 'ok';
  } catch (error) {
    return (error as GatewayException).code;
  }
}

/**
 * A person's own team tokens (OwnTeamTokensService) over in-memory token records: the owner is on the record, a
 * person lists and manages their own alone, and their tokens are held to the team's models as every token is.
 */
describe('team tokens of your own', () => {
  let records: InMemoryTokenRecords;
  let tokens: TokenStore;
  let audited: Array<{ action: string; target: string; details?: Record<string, unknown> }>;
  let own: OwnTeamTokensService;

  beforeEach(() => {
    records = new InMemoryTokenRecords();
    tokens = new TokenStore(records);
    audited = [];
    const audit = {
      write: async (_by: unknown, action: string, target: string, details?: Record<string, unknown>) =>
        void audited.push({ action, target, details }),
    } as unknown as AuditLog;
    const credentials = { invalidateEverywhere: async () => undefined } as unknown as CredentialCache;
    const admin = new AccessAdminService(teams, tokens, credentials, audit, {} as TeamMembersService);
    own = new OwnTeamTokensService(admin);
  });

  it('issues a token with its owner on the record and in the audit, and lists it to its owner alone', async () => {
    const issued = await own.issue(by, 'open', mia, { name: 'laptop' });
    expect(issued).toMatchObject({ team: 'open', name: 'laptop', owner: mia, status: 'active' });
    expect(records.tokens.get(issued.id)).toMatchObject({ ownerSubject: mia.subject, ownerEmail: mia.email });
    expect(audited).toEqual([
      expect.objectContaining({
        action: 'token.create',
        target: `team/open/token/${issued.id}`,
        details: expect.objectContaining({ owner: mia }),
      }),
    ]);
    await own.issue(by, 'open', noah, { name: 'noahs' });
    const teams = await tokens.create('open', { name: 'the-teams' });
    expect((await own.list('open', mia.subject)).map((t) => t.name)).toEqual(['laptop']);
    expect((await own.list('open', noah.subject)).map((t) => t.owner)).toEqual([{ subject: noah.subject }]);
    expect((await own.list('other', mia.subject)).length).toBe(0);
    // The team's own list shows every token, each with its owner (null: the team's).
    const everyOne = (await tokens.list('open')).map((t) => [t.name, t.owner?.subject ?? null]);
    expect(everyOne.sort()).toEqual([
      ['laptop', mia.subject],
      ['noahs', noah.subject],
      ['the-teams', null],
    ]);
    expect(await codeOf(own.list('gone', mia.subject))).toBe('team_not_found');
    expect(teams.owner).toBeNull();
  });

  it("rotates and revokes the owner's own token, and answers 404 for anyone else's or another team's", async () => {
    const mine = await own.issue(by, 'open', mia, {});
    const noahs = await own.issue(by, 'open', noah, {});
    const theTeams = await tokens.create('open', {});
    const elsewhere = await own.issue(by, 'other', mia, {});
    for (const id of [noahs.id, theTeams.id]) {
      expect(await codeOf(own.revoke(by, 'open', mia.subject, id))).toBe('token_not_found');
      expect(await codeOf(own.rotate(by, 'open', mia.subject, id, 0))).toBe('token_not_found');
    }
    // Her own token, but asked for under another team: not found there.
    expect(await codeOf(own.revoke(by, 'open', mia.subject, elsewhere.id))).toBe('token_not_found');
    expect((await tokens.require(noahs.id)).status).toBe('active');
    expect((await tokens.require(elsewhere.id)).status).toBe('active');

    const rotated = await own.rotate(by, 'open', mia.subject, mine.id, 0);
    expect(rotated.token).not.toBe(mine.token);
    expect(rotated.owner).toEqual(mia);
    expect((await own.revoke(by, 'open', mia.subject, mine.id)).status).toBe('revoked');
  });

  it("holds a member's token to the team's models", async () => {
    expect(await codeOf(own.issue(by, 'open', mia, { models: ['gpt-*'] }))).toBe('invalid_request');
    expect((await own.issue(by, 'open', mia, { models: ['slow'] })).models).toEqual(['slow']);
  });
});
