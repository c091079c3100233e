import { LIMIT_CATALOGUE, LIMIT_NAMES, type LimitName } from '../../core/limit-catalogue';

/** The limit fields the console edits, in the catalogue's order, with its labels: [name, label]. */
export const LIMIT_FIELDS = LIMIT_NAMES.map((name) => [name, LIMIT_CATALOGUE[name].label] as const);

export type Limits = Partial<Record<LimitName, number>>;

/** The limits filled in on a create form (empty fields are left out). */
export function limitsOf(fields: FormData): Limits {
  const limits: Limits = {};
  for (const [name] of LIMIT_FIELDS) {
    const raw = String(fields.get(name) ?? '').trim();
    if (raw) limits[name] = Number(raw);
  }
  return limits;
}

/**
 * What an edit form changed in the limits it was filled with: a new value for a field changed, `null` for a field
 * emptied (the admin API clears that limit), nothing for a field left as it was; undefined when nothing changed.
 * The update names only these, so a limit the user did not touch is never sent, neither dropped nor written back
 * (which would undo a change made elsewhere since the page loaded).
 */
export function limitChanges(
  fields: FormData,
  before: Limits,
): Partial<Record<LimitName, number | null>> | undefined {
  const changes: Partial<Record<LimitName, number | null>> = {};
  for (const [name] of LIMIT_FIELDS) {
    const raw = String(fields.get(name) ?? '').trim();
    const value = raw === '' ? undefined : Number(raw);
    if (value === before[name]) continue;
    changes[name] = value === undefined ? null : value;
  }
  return Object.keys(changes).length ? changes : undefined;
}

/**
 * What an edit of the metadata changed, as the admin API's merge patch: each label added or changed with its new
 * value, each label removed as `null`; undefined when nothing changed.
 */
export function metadataChanges(
  before: Record<string, string>,
  after: Record<string, string>,
): Record<string, string | null> | undefined {
  const changes: Record<string, string | null> = {};
  for (const [key, value] of Object.entries(after)) if (before[key] !== value) changes[key] = value;
  for (const key of Object.keys(before)) if (!(key in after)) changes[key] = null;
  return Object.keys(changes).length ? changes : undefined;
}

/** `a, b` -> ['a', 'b']; empty -> undefined. */
export function listOf(raw: ReturnType<FormData['get']>): string[] | undefined {
  const items = String(raw ?? '')
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean);
  return items.length ? items : undefined;
}
