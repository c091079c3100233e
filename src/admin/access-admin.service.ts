import { Injectable } from '@nestjs/common';
import { AuditLog, type Actor } from '../audit/audit.log';
import { CredentialCache } from '../auth/credential.cache';
import { TokenStore, type NewToken, type TokenInfo } from '../auth/token.store';
import { GatewayException } from '../core/errors/gateway.exception';
import { compileModelGlobs } from '../routing/model-glob';
import { TeamStore, type ChangeCheck, type Team, type TeamChanges } from '../teams/team.store';
import { TeamMembersService } from './team-members.service';

/**
 * Every admin change goes through here, from the HTTP API and the CLI alike: it
 * validates across records, writes, tells every replica to drop what it cached, and
 * appends to the audit trail. The stores below it only read and write Redis.
 */
@Injectable()
export class AccessAdminService {
  constructor(
    readonly teams: TeamStore,
    readonly tokens: TokenStore,
    private readonly credentials: CredentialCache,
    private readonly audit: AuditLog,
    private readonly members: TeamMembersService,
  ) {}

  async createTeam(by: Actor, id: string, changes: TeamChanges): Promise<Team> {
    const team = await this.teams.create(id, changes);
    await this.audit.write(by, 'team.create', `team/${id}`, { ...changes });
    return team;
  }

  /**
   * `check` (a team-admin's bound) runs against the team as the store reads it, before the write (TeamStore.update).
   * The audit entry also says what was clamped to keep the team within a lowered ceiling.
   */
  async updateTeam(by: Actor, id: string, changes: TeamChanges, check?: ChangeCheck): Promise<Team> {
    const before = await this.teams.require(id);
    const { team, clamped } = await this.teams.update(id, changes, check);
    await this.credentials.invalidateEverywhere({ teamId: id });
    const action =
      changes.disabled === true && !before.disabled
        ? 'team.disable'
        : changes.disabled === false && before.disabled
          ? 'team.enable'
          : 'team.update';
    await this.audit.write(by, action, `team/${id}`, { ...changes, ...(clamped ? { clamped } : {}) });
    return team;
  }

  /**
   * Refused while the team has tokens that still work (active ones), unless `force`. Revoked and expired tokens
   * never block it: they are deleted with the team, as every token is with `force`.
   */
  async deleteTeam(
    by: Actor,
    id: string,
    force: boolean,
  ): Promise<{ id: string; object: 'team'; deleted: true; tokensDeleted: number }> {
    await this.teams.require(id);
    const tokenIds = await this.tokens.ids(id);
    const active = (await this.tokens.list(id)).filter((token) => token.status === 'active').length;
    if (active > 0 && !force) {
      throw new GatewayException(
        'team_has_tokens',
        `Team "${id}" still has ${active} active token(s); revoke them, or delete with force (?force=true, CLI --force).`,
      );
    }
    await this.tokens.removeMany(tokenIds);
    await this.teams.remove(id);
    await this.members.removeTeam(id);
    await this.credentials.invalidateEverywhere({ teamId: id });
    await this.audit.write(by, 'team.delete', `team/${id}`, { force, tokensDeleted: tokenIds.length });
    return { id, object: 'team', deleted: true, tokensDeleted: tokenIds.length };
  }

  async createToken(by: Actor, teamId: string, spec: NewToken): Promise<TokenInfo & { token: string }> {
    const team = await this.teams.require(teamId);
    if (spec.models) assertNarrower(spec.models, team);
    if (spec.expiresAt && spec.expiresAt.getTime() <= Date.now()) {
      throw new GatewayException('invalid_request', 'expiresAt must be in the future.', {
        param: 'expiresAt',
        wireCode: null,
      });
    }
    const created = await this.tokens.create(teamId, spec);
    await this.audit.write(by, 'token.create', `team/${teamId}/token/${created.id}`, {
      name: created.name,
      expiresAt: created.expiresAt,
      models: created.models,
      mcpTools: created.mcpTools,
      limits: created.limits,
      ...(created.owner ? { owner: created.owner } : {}),
    });
    return created;
  }

  async revokeToken(by: Actor, tokenId: string): Promise<TokenInfo> {
    const info = await this.tokens.revoke(tokenId);
    await this.credentials.invalidateEverywhere({ tokenId });
    await this.audit.write(by, 'token.revoke', `team/${info.team}/token/${tokenId}`);
    return info;
  }

  async rotateToken(
    by: Actor,
    tokenId: string,
    graceSeconds: number,
  ): Promise<TokenInfo & { token: string }> {
    const rotated = await this.tokens.rotate(tokenId, graceSeconds);
    await this.credentials.invalidateEverywhere({ tokenId });
    await this.audit.write(by, 'token.rotate', `team/${rotated.team}/token/${tokenId}`, { graceSeconds });
    return rotated;
  }
}

/** A token may only narrow its team's models: each of its names or globs must be one the team allows. */
function assertNarrower(models: string[], team: Team): void {
  const teamAllows = compileModelGlobs(team.models);
  const outside = models.filter((model) => !teamAllows(model));
  if (outside.length > 0) {
    throw new GatewayException(
      'invalid_request',
      `Team "${team.id}" may not use ${outside.map((m) => `\`${m}\``).join(', ')}; a token can only narrow its team's models.`,
      {
        param: 'models',
        wireCode: null,
      },
    );
  }
}
