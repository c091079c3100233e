import { LIMIT_CATALOGUE, LIMIT_NAMES, type LimitName } from '../../limits/limit-catalogue';

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

/** `a, b` -> ['a', 'b']; empty -> undefined. */
export function listOf(raw: ReturnType<FormData['get']>): string[] | undefined {
  const items = String(raw ?? '')
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean);
  return items.length ? items : undefined;
}
