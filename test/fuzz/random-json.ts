/**
 * Random JSON values and JSON text written the many ways clients write it (odd spacing, escapes where none are
 * needed, `\/`, integers as `1.0e0`), from a seeded random source (seededRandom): for the tests of the code that
 * reads request bytes itself (json-shape.ts, json-splice.ts), which must read any valid text as JSON.parse does.
 */

/** String pieces random values are made of: escapes, multi-byte characters, JSON's own punctuation. */
export const JSON_PIECES = [
  'a',
  'é',
  '"',
  '\\',
  '/',
  '\n',
  '\u2028',
  '😀',
  ' ',
  '{',
  '}',
  '[',
  ']',
  ',',
  ':',
  '\\"',
  '\\\\',
  'model',
  'x'.repeat(40),
  '\u0000',
];

/** A random piece of JSON_PIECES. */
export function jsonPiece(next: () => number): string {
  return JSON_PIECES[Math.floor(next() * JSON_PIECES.length)];
}

/**
 * A random JSON value: strings of up to `pieces` pieces, numbers, literals, and (above `maxDepth` only scalars)
 * arrays and objects of up to `items` items.
 */
export function randomJson(
  next: () => number,
  depth = 0,
  { maxDepth = 4, items = 5, pieces = 8 } = {},
): unknown {
  const kind = Math.floor(next() * (depth > maxDepth ? 4 : 6));
  if (kind === 0) return Array.from({ length: Math.floor(next() * pieces) }, () => jsonPiece(next)).join('');
  if (kind === 1) return Math.floor(next() * 2000) - 1000;
  if (kind === 2) return [true, false, null][Math.floor(next() * 3)];
  if (kind === 3) return next() * 10;
  const options = { maxDepth, items, pieces };
  if (kind === 4)
    return Array.from({ length: Math.floor(next() * items) }, () => randomJson(next, depth + 1, options));
  return Object.fromEntries(
    Array.from({ length: Math.floor(next() * items) }, (_, i) => [
      `${jsonPiece(next)}${i}`,
      randomJson(next, depth + 1, options),
    ]),
  );
}

/** JSON text for `value` as different clients write it: odd spacing, escapes where none are needed. */
export function writeJsonLikeClients(value: unknown, next: () => number): string {
  const space = () => [' ', '', '\n  ', '\t', ''][Math.floor(next() * 5)];
  if (typeof value === 'string') {
    let text = '"';
    for (const char of value) {
      const code = char.codePointAt(0)!;
      if (char === '"' || char === '\\') text += `\\${char}`;
      else if (code < 0x20 || next() < 0.15)
        text += Array.from(
          { length: char.length },
          (_, k) => `\\u${char.charCodeAt(k).toString(16).padStart(4, '0')}`,
        ).join('');
      else if (char === '/' && next() < 0.5) text += '\\/';
      else text += char;
    }
    return `${text}"`;
  }
  if (Array.isArray(value))
    return `[${space()}${value.map((item) => writeJsonLikeClients(item, next)).join(`${space()},${space()}`)}${space()}]`;
  if (value && typeof value === 'object') {
    const members = Object.entries(value).map(
      ([key, item]) =>
        `${writeJsonLikeClients(key, next)}${space()}:${space()}${writeJsonLikeClients(item, next)}`,
    );
    return `{${space()}${members.join(`,${space()}`)}${space()}}`;
  }
  return typeof value === 'number' && next() < 0.3 && Number.isInteger(value)
    ? `${value}.0e0`
    : JSON.stringify(value);
}
