/**
 * Upstream bodies assembled from the client's own bytes.
 *
 * A pass-through request is parsed once (to validate and route it) and used to be serialised again for the
 * upstream with little more than `model` changed. For a 100k-token prompt that second pass (`JSON.stringify`
 * and the UTF-8 encoding of its result) was over half of the gateway's CPU (issue 13). Instead, the body is
 * put together from the client's bytes: each top-level member whose value the adapter left unchanged is copied
 * as it came; changed, added or removed members are written anew.
 *
 * Why the result is the same request:
 * - the bytes are exactly the text `JSON.parse` accepted (UTF-8, read by common/http/plain-json-body.ts);
 * - a member is copied only when the value being sent is the same JSON as the parsed one (compared by
 *   structure; the unchanged strings of a prompt are the same string objects, so that is a pointer check);
 * - a body with a top-level key given twice is written anew (JSON.parse kept the last; the upstream might not).
 *   Keys repeated inside a nested object go as the client sent them: the upstream reads the client's own text
 *   there, as it would through a plain proxy.
 */
import { closingQuote, isJsonSpace } from './json-bytes';

/**
 * Below this size a fresh `JSON.stringify` costs a few microseconds and the splice would not pay for its scan.
 * Documented in docs/performance.md (big prompts).
 */
export const SPLICE_MIN_BYTES = 16 * 1024;

// JSON's structural bytes, as local constants: read from another module, each comparison costs a property load.
const QUOTE = 0x22;
const OPEN_OBJECT = 0x7b;
const CLOSE_OBJECT = 0x7d;
const OPEN_ARRAY = 0x5b;
const CLOSE_ARRAY = 0x5d;
const COMMA = 0x2c;
const COLON = 0x3a;

const OPEN = Buffer.from('{');
const CLOSE = Buffer.from('}');
const SEPARATOR = Buffer.from(',');

/**
 * `body` (the object an adapter would serialise) as JSON bytes, copying from `source` every top-level member
 * whose value is unchanged. Undefined when nothing could be copied (then serialise as usual): the source is
 * small, not an object, or repeats a top-level key.
 */
export function spliceJson(
  source: JsonSource,
  body: Record<string, unknown>,
  minBytes = SPLICE_MIN_BYTES,
): Buffer | undefined {
  const { bytes, parsed } = source;
  if (bytes.length < minBytes || !isRecord(parsed)) return undefined;
  const members = topLevelMembers(bytes);
  if (!members) return undefined;
  const parts: Buffer[] = [OPEN];
  let copied = false;
  for (const key of Object.keys(body)) {
    const value = body[key];
    if (!serialisable(value)) continue; // JSON.stringify leaves these out too
    if (parts.length > 1) parts.push(SEPARATOR);
    const span = members.get(key);
    if (span && Object.hasOwn(parsed, key) && sameJson(value, parsed[key])) {
      parts.push(bytes.subarray(span.start, span.end));
      copied = true;
    } else {
      parts.push(Buffer.from(`${JSON.stringify(key)}:${JSON.stringify(value)}`));
    }
  }
  parts.push(CLOSE);
  return copied ? Buffer.concat(parts) : undefined;
}

/** Byte range of one top-level member: from its key's opening quote to the end of its value. */
interface MemberSpan {
  start: number;
  end: number;
}

/**
 * The top-level members of a JSON object text, by key. Undefined when the text is not an object or names a key
 * twice. Linear: string contents are skipped with `indexOf` (native), only the structure between strings is
 * walked byte by byte. The text is known to be valid JSON (it was parsed), so this only finds boundaries.
 */
export function topLevelMembers(bytes: Buffer): Map<string, MemberSpan> | undefined {
  const bom = bytes[0] === 0xef && bytes[1] === 0xbb && bytes[2] === 0xbf ? 3 : 0;
  let at = skipSpace(bytes, bom);
  if (bytes[at] !== OPEN_OBJECT) return undefined;
  const members = new Map<string, MemberSpan>();
  at = skipSpace(bytes, at + 1);
  if (bytes[at] === CLOSE_OBJECT) return members;
  for (;;) {
    if (bytes[at] !== QUOTE) return undefined;
    const start = at;
    const keyEnd = stringEnd(bytes, at);
    if (keyEnd < 0) return undefined;
    const key = keyText(bytes, start, keyEnd);
    if (members.has(key)) return undefined;
    at = skipSpace(bytes, keyEnd);
    if (bytes[at] !== COLON) return undefined;
    at = skipSpace(bytes, at + 1);
    const end = valueEnd(bytes, at);
    if (end < 0) return undefined;
    members.set(key, { start, end });
    at = skipSpace(bytes, end);
    if (bytes[at] === COMMA) at = skipSpace(bytes, at + 1);
    else return bytes[at] === CLOSE_OBJECT ? members : undefined;
  }
}

/** The index just past the closing quote of the string opening at `open`, or -1. */
function stringEnd(bytes: Buffer, open: number): number {
  const quote = closingQuote(bytes, open + 1);
  return quote < 0 ? -1 : quote + 1;
}

/** The index just past the value starting at `start`, or -1. */
function valueEnd(bytes: Buffer, start: number): number {
  const first = bytes[start];
  if (first === QUOTE) return stringEnd(bytes, start);
  if (first === OPEN_OBJECT || first === OPEN_ARRAY) {
    let depth = 0;
    for (let at = start; at < bytes.length; at++) {
      const byte = bytes[at];
      if (byte === QUOTE) {
        const end = stringEnd(bytes, at);
        if (end < 0) return -1;
        at = end - 1;
      } else if (byte === OPEN_OBJECT || byte === OPEN_ARRAY) depth++;
      else if ((byte === CLOSE_OBJECT || byte === CLOSE_ARRAY) && --depth === 0) return at + 1;
    }
    return -1;
  }
  // A number, true, false or null: up to the next delimiter.
  let at = start;
  while (at < bytes.length && !isDelimiter(bytes[at])) at++;
  return at > start ? at : -1;
}

function keyText(bytes: Buffer, start: number, end: number): string {
  const inner = bytes.toString('utf8', start + 1, end - 1);
  return inner.includes('\\') ? (JSON.parse(bytes.toString('utf8', start, end)) as string) : inner;
}

function skipSpace(bytes: Buffer, at: number): number {
  while (isJsonSpace(bytes[at])) at++;
  return at;
}

function isDelimiter(byte: number): boolean {
  return byte === COMMA || byte === CLOSE_OBJECT || byte === CLOSE_ARRAY || isJsonSpace(byte);
}

/** True when `a` serialises to the same JSON value as `b`, a value JSON.parse made. */
function sameJson(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (typeof a !== 'object' || typeof b !== 'object' || a === null || b === null) return false;
  if (Array.isArray(a)) {
    if (!Array.isArray(b) || a.length !== b.length) return false;
    for (let i = 0; i < a.length; i++) if (!sameJson(a[i], b[i])) return false;
    return true;
  }
  if (Array.isArray(b) || typeof (a as { toJSON?: unknown }).toJSON === 'function') return false;
  const left = a as Record<string, unknown>;
  const right = b as Record<string, unknown>;
  let count = 0;
  for (const key of Object.keys(left)) {
    const value = left[key];
    if (!serialisable(value)) continue; // a DTO's declared but absent fields are own properties set to undefined
    count++;
    if (!Object.hasOwn(right, key) || !sameJson(value, right[key])) return false;
  }
  return count === Object.keys(right).length;
}

function serialisable(value: unknown): boolean {
  return value !== undefined && typeof value !== 'function' && typeof value !== 'symbol';
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** The client's JSON body: its bytes (UTF-8) and what `JSON.parse` made of them, before validation. */
export interface JsonSource {
  bytes: Buffer;
  parsed: unknown;
}
