import type { TokenFields, TokenRecords } from '../../src/auth/token-records.repository';

/** TokenRecords in memory, for unit tests: records by id, ids by team. */
export class InMemoryTokenRecords implements TokenRecords {
  readonly tokens = new Map<string, TokenFields>();
  readonly byTeam = new Map<string, Set<string>>();

  async add(teamId: string, id: string, fields: TokenFields): Promise<void> {
    this.tokens.set(id, { ...fields });
    this.byTeam.set(teamId, (this.byTeam.get(teamId) ?? new Set()).add(id));
  }

  async read(id: string): Promise<TokenFields> {
    return { ...(this.tokens.get(id) ?? {}) };
  }

  async readMany(ids: string[]): Promise<TokenFields[]> {
    return Promise.all(ids.map((id) => this.read(id)));
  }

  async idsOf(teamId: string): Promise<string[]> {
    return [...(this.byTeam.get(teamId) ?? [])];
  }

  async write(id: string, fields: TokenFields): Promise<void> {
    this.tokens.set(id, { ...(this.tokens.get(id) ?? {}), ...fields });
  }

  async writeIfExists(id: string, fields: TokenFields): Promise<boolean> {
    const found = this.tokens.get(id);
    if (found) Object.assign(found, fields);
    return Boolean(found);
  }

  async remove(id: string): Promise<void> {
    this.tokens.delete(id);
    for (const ids of this.byTeam.values()) ids.delete(id);
  }
}
