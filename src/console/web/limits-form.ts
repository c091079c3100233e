/** The limit fields the console edits, as in the admin API's LimitSettings. */
export const LIMIT_FIELDS = [
  ['requestsPerMinute', 'Requests / minute'],
  ['tokensPerMinute', 'Tokens / minute'],
  ['tokensPerDay', 'Tokens / day'],
  ['tokensPerMonth', 'Tokens / month'],
  ['concurrentRequests', 'Concurrent requests'],
  ['budgetPerDay', 'Budget / day'],
  ['budgetPerMonth', 'Budget / month'],
] as const;

/** The limits filled in on a form (empty fields are left out). */
export function limitsOf(fields: FormData): Record<string, number> {
  const limits: Record<string, number> = {};
  for (const [key] of LIMIT_FIELDS) {
    const raw = String(fields.get(key) ?? '').trim();
    if (raw) limits[key] = Number(raw);
  }
  return limits;
}

/** `a, b` -> ['a', 'b']; empty -> undefined. */
export function listOf(raw: FormDataEntryValue | null): string[] | undefined {
  const items = String(raw ?? '')
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean);
  return items.length ? items : undefined;
}
