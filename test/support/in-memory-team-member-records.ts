import type { Membership, TeamMemberRecords } from '../../src/access/team-member-records.repository';

/** The TeamMemberRecords repository in memory, with the Redis one's contract (one grant per team and subject). */
export class InMemoryTeamMemberRecords implements TeamMemberRecords {
  private readonly grants = new Map<string, Membership>();

  async put(membership: Membership): Promise<void> {
    this.grants.set(key(membership.team, membership.subject), { ...membership });
  }

  async find(team: string, subject: string): Promise<Membership | null> {
    return this.grants.get(key(team, subject)) ?? null;
  }

  async ofTeam(team: string): Promise<Membership[]> {
    return [...this.grants.values()]
      .filter((m) => m.team === team)
      .sort((a, b) => a.subject.localeCompare(b.subject));
  }

  async ofSubject(subject: string): Promise<Membership[]> {
    return [...this.grants.values()].filter((m) => m.subject === subject);
  }

  async remove(team: string, subject: string): Promise<boolean> {
    return this.grants.delete(key(team, subject));
  }
}

const key = (team: string, subject: string) => `${team}\n${subject}`;
