/** The Nest injection token of the TeamRecords repository (Redis in production). */
export const TEAM_RECORDS = Symbol('TeamRecords');

/** A team's record as stored: field -> string (JSON for models, limits and metadata; team.store.ts). */
export type TeamFields = Record<string, string>;

/** How a guarded write went: written, a guarded field changed since it was read, or no such team. */
export type GuardedWrite = 'written' | 'changed' | 'missing';

/** Team records and the index of team ids. */
export interface TeamRecords {
  /** Creates the record in one atomic step unless it exists, and indexes its id; false when it existed already. */
  createIfMissing(id: string, fields: TeamFields): Promise<boolean>;
  /** The record ({} when there is none). */
  read(id: string): Promise<TeamFields>;
  /** Each record, in the order asked (rejects when one cannot be read). */
  readMany(ids: string[]): Promise<TeamFields[]>;
  /** Every indexed team id (an id may outlive its record: readers skip it). */
  ids(): Promise<string[]>;
  /** Writes `fields` if the record exists and each `guards` field still holds its value ('' for absent). */
  writeIfUnchanged(id: string, guards: TeamFields, fields: TeamFields): Promise<GuardedWrite>;
  /** Removes the record, its token index and its id from the index. */
  remove(id: string): Promise<void>;
}
