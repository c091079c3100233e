import { Injectable } from '@nestjs/common';
import type { Person } from '../access/roles';
import type { Actor } from '../audit/audit.log';
import type { NewToken, TokenInfo } from '../auth/token.store';
import { GatewayException } from '../core/errors/gateway.exception';
import { AccessAdminService } from './access-admin.service';

/**
 * Team tokens of a person's own (self-service, `tokens:own`): issued with their owner on the record, and listed,
 * rotated and revoked by that owner alone, through the same admin service as every token (validated the same
 * way: models only narrow the team's; audited the same way). Someone else's token, or one of another team, is
 * 404 token_not_found here: it is not the caller's to know about. A team's tokens:read holders see every token
 * with its owner on the team's own routes.
 */
@Injectable()
export class OwnTeamTokensService {
  constructor(private readonly admin: AccessAdminService) {}

  issue(by: Actor, team: string, owner: Person, spec: NewToken): Promise<TokenInfo & { token: string }> {
    return this.admin.createToken(by, team, {
      ...spec,
      owner: { subject: owner.subject, ...(owner.email ? { email: owner.email } : {}) },
    });
  }

  async list(team: string, subject: string): Promise<TokenInfo[]> {
    await this.admin.teams.require(team);
    return (await this.admin.tokens.list(team)).filter((token) => token.owner?.subject === subject);
  }

  async revoke(by: Actor, team: string, subject: string, tokenId: string): Promise<TokenInfo> {
    await this.requireOwn(team, subject, tokenId);
    return this.admin.revokeToken(by, tokenId);
  }

  async rotate(
    by: Actor,
    team: string,
    subject: string,
    tokenId: string,
    graceSeconds: number,
  ): Promise<TokenInfo & { token: string }> {
    await this.requireOwn(team, subject, tokenId);
    return this.admin.rotateToken(by, tokenId, graceSeconds);
  }

  private async requireOwn(team: string, subject: string, tokenId: string): Promise<TokenInfo> {
    const token = await this.admin.tokens.require(tokenId);
    if (token.team !== team || token.owner?.subject !== subject)
      throw new GatewayException(
        'token_not_found',
        `Token "${tokenId}" is not one of your own tokens of team "${team}".`,
      );
    return token;
  }
}
