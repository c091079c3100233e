/** The Nest injection token of the TokenRecords repository (Redis in production). */
export const TOKEN_RECORDS = Symbol('TokenRecords');

/** A token's record as stored: field -> string (SHA-256 of the secret, never the secret; token.store.ts). */
export type TokenFields = Record<string, string>;

/** Team tokens' records and each team's index of its token ids. */
export interface TokenRecords {
  /** Writes a new token's record, then lists it under its team: a crash in between leaves an unlisted token, never a listed ghost. */
  add(teamId: string, id: string, fields: TokenFields): Promise<void>;
  /** The record ({} when there is none). */
  read(id: string): Promise<TokenFields>;
  /** Each record, in the order asked (rejects when one cannot be read). */
  readMany(ids: string[]): Promise<TokenFields[]>;
  /** The ids listed under a team. */
  idsOf(teamId: string): Promise<string[]>;
  /** Sets these fields of the record. */
  write(id: string, fields: TokenFields): Promise<void>;
  /** Sets these fields only if the record exists (a deleted token must not come back as a stub). */
  writeIfExists(id: string, fields: TokenFields): Promise<boolean>;
  remove(id: string): Promise<void>;
}
