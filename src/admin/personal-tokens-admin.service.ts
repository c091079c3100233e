import { Injectable } from '@nestjs/common';
import type { Person } from '../access/roles';
import { AuditLog, type Actor } from '../audit/audit.log';
import { PERSONAL_TOKEN_DEFAULT_DAYS, PersonalTokens, type PersonalTokenInfo } from '../auth/personal-tokens';
import { checkedSubject } from './team-members.service';

/** Personal admin tokens issued and revoked through the admin API, audited like every admin change. */
@Injectable()
export class PersonalTokensAdminService {
  constructor(
    private readonly tokens: PersonalTokens,
    private readonly audit: AuditLog,
  ) {}

  async issue(by: Actor, person: Person, name: string, days = PERSONAL_TOKEN_DEFAULT_DAYS) {
    const issued = await this.tokens.issue(person, name, days);
    await this.audit.write(by, 'admin_token.issue', targetOf(issued), {
      name,
      expiresAt: issued.expiresAt,
    });
    return issued;
  }

  list(subject: string): Promise<PersonalTokenInfo[]> {
    return this.tokens.list(checkedSubject(subject));
  }

  async revoke(by: Actor, subject: string, id: string): Promise<PersonalTokenInfo> {
    const revoked = await this.tokens.revoke(checkedSubject(subject), id);
    await this.audit.write(by, 'admin_token.revoke', targetOf(revoked));
    return revoked;
  }
}

const targetOf = (token: PersonalTokenInfo) => `person/${token.subject}/admin-token/${token.id}`;
