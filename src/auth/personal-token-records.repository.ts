/** The Nest injection token of the personal admin tokens' repository (Redis in production). */
export const PERSONAL_TOKEN_RECORDS = Symbol('PersonalTokenRecords');

/** A personal token's record as stored: field -> string (SHA-256 of the token, never the token). */
export type PersonalTokenFields = Record<string, string>;

/**
 * Personal admin tokens, each person's index of theirs, and what each person's last sign-in through the identity
 * provider said of them (the person and their roles), which a personal token acts with.
 */
export interface PersonalTokenRecords {
  /** Writes the record, then lists it under its person; the record is kept until `keepUntil` (ms). */
  add(subject: string, id: string, fields: PersonalTokenFields, keepUntil: number): Promise<void>;
  /** The record ({} when there is none). */
  read(id: string): Promise<PersonalTokenFields>;
  /** The person's tokens' records (those gone are left out). */
  ofSubject(subject: string): Promise<PersonalTokenFields[]>;
  /** Sets these fields only if the record exists (a removed token must not come back as a stub). */
  writeIfExists(id: string, fields: PersonalTokenFields): Promise<boolean>;
  /** The person's last sign-in (JSON), replacing the one before. */
  saveSignIn(subject: string, signIn: string): Promise<void>;
  signIn(subject: string): Promise<string | null>;
}
