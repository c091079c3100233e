import type { GuardedWrite, TeamFields, TeamRecords } from '../../src/teams/team-records.repository';

/**
 * The TeamRecords repository in memory, with the Redis one's contract (writeIfUnchanged is one step, as its Lua
 * script is). `afterRead`, when set, runs once after the next read has been answered and before its caller goes on:
 * a test's way to make another change land between an update's read and its write.
 */
export class InMemoryTeamRecords implements TeamRecords {
  readonly records = new Map<string, TeamFields>();
  afterRead?: () => Promise<void>;

  async createIfMissing(id: string, fields: TeamFields): Promise<boolean> {
    if (this.records.has(id)) return false;
    this.records.set(id, { ...fields });
    return true;
  }

  async read(id: string): Promise<TeamFields> {
    const fields = { ...(this.records.get(id) ?? {}) };
    const hook = this.afterRead;
    this.afterRead = undefined;
    await hook?.();
    return fields;
  }

  async readMany(ids: string[]): Promise<TeamFields[]> {
    return ids.map((id) => ({ ...(this.records.get(id) ?? {}) }));
  }

  async ids(): Promise<string[]> {
    return [...this.records.keys()];
  }

  async writeIfUnchanged(id: string, guards: TeamFields, fields: TeamFields): Promise<GuardedWrite> {
    const record = this.records.get(id);
    if (!record) return 'missing';
    if (Object.entries(guards).some(([field, expected]) => (record[field] ?? '') !== expected))
      return 'changed';
    Object.assign(record, fields);
    return 'written';
  }

  async remove(id: string): Promise<void> {
    this.records.delete(id);
  }
}
