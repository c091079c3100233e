/*
 * JSON text read byte by byte: where a string ends, and what is whitespace. Shared by the two
 * readers of request bytes, which read for different ends: json-shape.ts counts a body's values as its chunks
 * arrive (resumable, before the body is parsed), providers/shared/json-splice.ts finds the top-level members of a
 * whole parsed body to copy them. Multi-byte UTF-8 sequences never contain these ASCII bytes.
 */

// Local, not exported: TypeScript's CommonJS output reads an exported const as `exports.X` at every use, a property
// load per byte compared. The readers keep their own copies of the structural bytes for the same reason.
const QUOTE = 0x22;
const BACKSLASH = 0x5c;

/** JSON's whitespace: space, tab, line feed, carriage return. */
export function isJsonSpace(byte: number | undefined): boolean {
  return byte === 0x20 || byte === 0x0a || byte === 0x0d || byte === 0x09;
}

/**
 * The index of the quote that ends the string whose contents run from `from`, or -1 when `bytes` ends first. Jumps
 * from quote to quote natively (`indexOf`) and looks back from each for the backslashes just before it (an odd
 * run escapes it), so each byte is searched once however many escapes the string has. `from` must not be inside
 * an escape (just past the opening quote, or past a byte already known to be content).
 */
export function closingQuote(bytes: Uint8Array, from: number): number {
  for (let at = from; ;) {
    const quote = bytes.indexOf(QUOTE, at);
    if (quote < 0) return -1;
    // oddBackslashesBefore, written out: this loop runs for every string of a body.
    let run = 0;
    for (let j = quote - 1; j >= from && bytes[j] === BACKSLASH; j--) run++;
    if (run % 2 === 0) return quote;
    at = quote + 1;
  }
}

/** True when the bytes just before `at` (not before `from`) are an odd run of backslashes. */
export function oddBackslashesBefore(bytes: Uint8Array, at: number, from: number): boolean {
  let run = 0;
  for (let j = at - 1; j >= from && bytes[j] === BACKSLASH; j--) run++;
  return run % 2 === 1;
}
