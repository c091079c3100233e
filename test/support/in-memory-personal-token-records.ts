import type {
  PersonalTokenFields,
  PersonalTokenRecords,
} from '../../src/auth/personal-token-records.repository';

/** PersonalTokenRecords in memory, for unit tests: records by id, ids by person, sign-ins by person. */
export class InMemoryPersonalTokenRecords implements PersonalTokenRecords {
  readonly tokens = new Map<string, PersonalTokenFields>();
  readonly bySubject = new Map<string, Set<string>>();
  readonly signIns = new Map<string, string>();

  async add(subject: string, id: string, fields: PersonalTokenFields): Promise<void> {
    this.tokens.set(id, { ...fields });
    this.bySubject.set(subject, (this.bySubject.get(subject) ?? new Set()).add(id));
  }

  async read(id: string): Promise<PersonalTokenFields> {
    return { ...(this.tokens.get(id) ?? {}) };
  }

  async ofSubject(subject: string): Promise<PersonalTokenFields[]> {
    return [...(this.bySubject.get(subject) ?? [])].flatMap((id) => {
      const fields = this.tokens.get(id);
      return fields ? [{ ...fields }] : [];
    });
  }

  async writeIfExists(id: string, fields: PersonalTokenFields): Promise<boolean> {
    const found = this.tokens.get(id);
    if (found) Object.assign(found, fields);
    return Boolean(found);
  }

  async saveSignIn(subject: string, signIn: string): Promise<void> {
    this.signIns.set(subject, signIn);
  }

  async signIn(subject: string): Promise<string | null> {
    return this.signIns.get(subject) ?? null;
  }
}
