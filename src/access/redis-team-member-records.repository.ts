import { Inject, Injectable } from '@nestjs/common';
import type Redis from 'ioredis';
import { REDIS } from '../redis/redis.module';
import { RedisKeys } from '../redis/redis-keys';
import type { Membership, TeamMemberRecords } from './team-member-records.repository';

type Stored = Pick<Membership, 'role' | 'grantedAt' | 'grantedBy'>;

/**
 * Memberships in two hashes: the team's (`team:{<team>}:members`, subject -> grant) and the person's
 * (`person:{<subject>}:teams`, team -> grant), which the auth guard reads. They live in different cluster slots,
 * so they are written one after the other, in the order that never lets a half-done change grant more than
 * asked: a grant lands in the team's hash first and takes effect when the person's is written; a revocation
 * takes effect first (the person's hash), then leaves the team's list. A retried PUT or DELETE completes either.
 */
@Injectable()
export class RedisTeamMemberRecords implements TeamMemberRecords {
  constructor(
    @Inject(REDIS) private readonly redis: Redis,
    private readonly keys: RedisKeys,
  ) {}

  async put({ team, subject, ...grant }: Membership): Promise<void> {
    const stored = JSON.stringify(grant satisfies Stored);
    await this.redis.hset(this.keys.teamMembers(team), subject, stored);
    await this.redis.hset(this.keys.personTeams(subject), team, stored);
  }

  async find(team: string, subject: string): Promise<Membership | null> {
    const stored = await this.redis.hget(this.keys.teamMembers(team), subject);
    return stored ? { team, subject, ...(JSON.parse(stored) as Stored) } : null;
  }

  async ofTeam(team: string): Promise<Membership[]> {
    const all = await this.redis.hgetall(this.keys.teamMembers(team));
    return Object.entries(all)
      .map(([subject, stored]) => ({ team, subject, ...(JSON.parse(stored) as Stored) }))
      .sort((a, b) => a.subject.localeCompare(b.subject));
  }

  async ofSubject(subject: string): Promise<Membership[]> {
    const all = await this.redis.hgetall(this.keys.personTeams(subject));
    return Object.entries(all).map(([team, stored]) => ({
      team,
      subject,
      ...(JSON.parse(stored) as Stored),
    }));
  }

  async remove(team: string, subject: string): Promise<boolean> {
    const fromPerson = await this.redis.hdel(this.keys.personTeams(subject), team);
    const fromTeam = await this.redis.hdel(this.keys.teamMembers(team), subject);
    return fromPerson + fromTeam > 0;
  }
}
