/** A stream entry id as the APIs accept it for paging: up to 19 digits each side (always a valid 64-bit id). */
export const STREAM_ID_PATTERN = /^\d{1,19}-\d{1,19}$/;

/**
 * The end of an XREVRANGE that pages "entries before `before`": `(id` (exclusive), `+` for the first page,
 * or null when nothing can come before it (`0-0`, which Redis refuses as an exclusive end).
 */
export function pageEnd(before: string | undefined): string | null {
  if (before === undefined) return '+';
  return /^0+-0+$/.test(before) ? null : `(${before}`;
}
