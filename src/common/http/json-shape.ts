import { randomBytes } from 'node:crypto';
import { closingQuote, oddBackslashesBefore } from '../../core/json-bytes';

/**
 * The shape of a JSON body, measured from its bytes before anything is built from them: how many values it holds
 * and how deep it nests. Each value a body holds costs the gateway work that cannot be split across turns of the
 * event loop (`JSON.parse`, validation, translation, `JSON.stringify` for the upstream, the stored copy of a
 * Responses input), ~0.05-0.3 us each in each step; 650,000 one-letter chat messages (18.6 MB, within
 * `server.maxBodyBytes`) used to block the event loop for ~5 s. Counting first lets a body with too many values be
 * refused before any of that work starts, and every body that is let through is small enough for each step to fit
 * one turn of well under 50 ms (docs/performance.md, many small items).
 */

/** JSON bodies nest at most this deep: a JSON schema in `tools` or `response_format` is a few dozen levels. */
export const MAX_BODY_DEPTH = 128;

/**
 * Objects, arrays and strings (keys not counted) one request body may hold. Several times what clients send (a
 * long Claude Code or Codex session with its tools is ~20,000), and low enough that each step over the biggest
 * body the gateway accepts takes well under 50 ms of one event-loop turn on a busy machine.
 */
export const MAX_BODY_VALUES = 100_000;

/**
 * Numbers, `true`, `false` and `null` one request body may hold. They cost a fraction of an object or a string
 * (nothing is allocated for a small integer) and an embeddings request may be token arrays: OpenAI takes up to
 * 300,000 tokens per request, so that fits.
 */
export const MAX_BODY_SCALARS = 400_000;

/**
 * Distinct object keys one request body may use. Each new key costs V8 far more than a value (it is interned and
 * gives objects new hidden classes: 100,000 distinct keys took 25-90 ms to parse, and as long again to copy),
 * while a request repeats the same few: a long agent session with its tools' JSON schemas uses a few hundred.
 */
export const MAX_BODY_KEYS = 10_000;

// JSON's structural bytes, as local constants: read from another module, each comparison costs a property load.
const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const OPEN_OBJECT = 0x7b;
const CLOSE_OBJECT = 0x7d;
const OPEN_ARRAY = 0x5b;
const CLOSE_ARRAY = 0x5d;
const COMMA = 0x2c;
const COLON = 0x3a;
const IN_OBJECT = 1;
const IN_ARRAY = 2;

/** Strings longer than this are skipped with the native `indexOf` instead of byte by byte. */
const LONG_STRING = 24;

/**
 * Keys are told apart by a 53-bit hash of their bytes, seeded at random per process so that no client can make
 * distinct keys collide on purpose (an accidental collision only lets one more key through).
 */
const [KEY_SEED_1, KEY_SEED_2] = new Int32Array(randomBytes(8).buffer);

/** What a scan found over a limit, or undefined. */
export type ShapeExcess = 'depth' | 'values' | 'scalars' | 'keys';

/**
 * A resumable scan of UTF-8 JSON bytes, fed chunk by chunk as they arrive: the values and scalars so far and the
 * nesting depth, stopping at the first limit passed. It checks no grammar (JSON.parse does that afterwards); for
 * bytes that are not JSON the count is only an estimate. Linear, and cheap: string contents are skipped with the
 * native `indexOf` once a string is long (a 15 MB prompt is a few hundred microseconds), structure is walked byte
 * by byte (~2 ns a byte). Multi-byte UTF-8 sequences never contain the ASCII bytes it looks for.
 */
export class JsonShapeScanner {
  /** Objects, arrays and strings seen so far (keys not counted). */
  values = 0;
  /** Numbers and literals seen so far. */
  scalars = 0;
  /** Set once a limit is passed; nothing more is scanned. */
  excess: ShapeExcess | undefined;
  private depth = 0;
  /** What each open level is (IN_OBJECT or IN_ARRAY), by depth. */
  private readonly levels: Uint8Array;
  private inString = false;
  /** The last byte of the previous chunk was a backslash inside a string: the next byte is escaped. */
  private escaping = false;
  /** Inside a number or a literal (true, false, null). */
  private inBareValue = false;
  /** The next string is an object key, not a value. */
  private keyNext = false;
  /** Inside an object key: its bytes are hashed (keyHash1, keyHash2) to count distinct keys. */
  private inKey = false;
  private keyHash1 = 0;
  private keyHash2 = 0;
  private readonly keys = new Set<number>();

  constructor(
    readonly maxDepth = MAX_BODY_DEPTH,
    readonly maxValues = MAX_BODY_VALUES,
    readonly maxScalars = MAX_BODY_SCALARS,
    readonly maxKeys = MAX_BODY_KEYS,
  ) {
    this.levels = new Uint8Array(maxDepth + 2);
  }

  /** Scans the next chunk. Returns false once a limit is passed (see `excess`). */
  push(bytes: Uint8Array): boolean {
    if (this.excess) return false;
    const end = bytes.length;
    let i = 0;
    if (this.escaping) {
      this.escaping = false;
      if (this.inKey && end > 0) this.hashKeyByte(bytes[0]);
      i = 1;
    }
    while (i < end) {
      if (this.inString) {
        i = this.inKey ? this.skipKey(bytes, i, end) : this.skipString(bytes, i, end);
        if (this.excess) return false;
        continue;
      }
      const byte = bytes[i++];
      switch (byte) {
        case 0x20:
        case 0x09:
        case 0x0a:
        case 0x0d:
          this.inBareValue = false;
          break;
        case QUOTE:
          this.inBareValue = false;
          this.inString = true;
          if (this.keyNext) {
            this.keyNext = false;
            this.inKey = true;
            this.keyHash1 = KEY_SEED_1;
            this.keyHash2 = KEY_SEED_2;
          } else if (++this.values > this.maxValues) return this.exceeded('values');
          break;
        case OPEN_OBJECT:
        case OPEN_ARRAY:
          this.inBareValue = false;
          if (++this.values > this.maxValues) return this.exceeded('values');
          if (++this.depth > this.maxDepth) return this.exceeded('depth');
          this.levels[this.depth] = byte === OPEN_OBJECT ? IN_OBJECT : IN_ARRAY;
          this.keyNext = byte === OPEN_OBJECT;
          break;
        case CLOSE_OBJECT:
        case CLOSE_ARRAY:
          this.inBareValue = false;
          this.keyNext = false;
          if (this.depth > 0) this.depth--;
          break;
        case COMMA:
          this.inBareValue = false;
          this.keyNext = this.levels[this.depth] === IN_OBJECT;
          break;
        case COLON:
          this.inBareValue = false;
          this.keyNext = false;
          break;
        default:
          // A number or a literal; counted at its first byte.
          if (!this.inBareValue) {
            this.inBareValue = true;
            if (++this.scalars > this.maxScalars) return this.exceeded('scalars');
          }
      }
    }
    return true;
  }

  /** From inside a key at `i`: as skipString, hashing the key's bytes; a new key is counted at its closing quote. */
  private skipKey(bytes: Uint8Array, i: number, end: number): number {
    while (i < end) {
      const byte = bytes[i];
      if (byte === QUOTE) {
        this.inString = false;
        this.inKey = false;
        this.keys.add((this.keyHash1 >>> 0) * 0x200000 + ((this.keyHash2 >>> 0) & 0x1fffff));
        if (this.keys.size > this.maxKeys) this.exceeded('keys');
        return i + 1;
      }
      this.hashKeyByte(byte);
      if (byte === BACKSLASH) {
        if (i + 1 >= end) {
          this.escaping = true;
          return end;
        }
        this.hashKeyByte(bytes[i + 1]);
        i += 2;
        continue;
      }
      i++;
    }
    return end;
  }

  /** Two multiplicative (FNV-1a style) hashes with different primes and random seeds. */
  private hashKeyByte(byte: number): void {
    this.keyHash1 = Math.imul(this.keyHash1 ^ byte, 0x01000193);
    this.keyHash2 = Math.imul(this.keyHash2 ^ byte, 0x9e3779b1);
  }

  /** From inside a string at `i`: the index just past its closing quote, or `end` if it goes on in the next chunk. */
  private skipString(bytes: Uint8Array, i: number, end: number): number {
    const start = i;
    while (i < end) {
      const byte = bytes[i];
      if (byte === QUOTE) {
        this.inString = false;
        return i + 1;
      }
      if (byte === BACKSLASH) {
        if (i + 1 >= end) {
          this.escaping = true;
          return end;
        }
        i += 2;
        continue;
      }
      i++;
      if (i - start >= LONG_STRING) return this.skipLongString(bytes, i, end);
    }
    return i;
  }

  /** The rest of a long string (json-bytes.ts, closingQuote): each byte is searched once, however many escapes. */
  private skipLongString(bytes: Uint8Array, i: number, end: number): number {
    const quote = closingQuote(bytes, i);
    if (quote >= 0) {
      this.inString = false;
      return quote + 1;
    }
    // The string goes on in the next chunk; an odd run of backslashes at this chunk's end escapes its first byte.
    this.escaping = oddBackslashesBefore(bytes, end, i);
    return end;
  }

  private exceeded(what: ShapeExcess): false {
    this.excess = what;
    return false;
  }
}

/**
 * From this many values a body's steps (parse, validation, the handler's translation of it, its stored copy) each
 * get a turn of the event loop of their own: added up in one synchronous run they would not fit the bound.
 * Smaller bodies (a few milliseconds at most for all of it) go straight through.
 */
export const PACED_BODY_VALUES = 10_000;

/**
 * From this many bytes a body's steps take turns of their own too, however few values it holds: a long prompt
 * costs by the byte (its decode and parse, the estimate over its text at admission, the upstream body built or
 * spliced from it), a few milliseconds per MB each under load. A 15 MB one-string prompt has a handful of values,
 * and four of them at once, unpaced, ran their admissions' estimates and their upstream bodies back to back in the
 * turn that read the admissions' replies from Redis (111 ms measured, test/e2e/event-loop-bound.e2e.spec.ts).
 */
export const PACED_BODY_BYTES = 1024 * 1024;

/** What the body reader measured of a parsed body: the values it holds (objects, arrays, strings) and its bytes. */
export interface BodyShape {
  values: number;
  bytes: number;
}

/** True for a body big enough that its steps take turns of their own (PACED_BODY_VALUES, PACED_BODY_BYTES). */
export function isPacedBody(body: unknown): boolean {
  const shape = shapeOf(body);
  return shape !== undefined && (shape.values >= PACED_BODY_VALUES || shape.bytes >= PACED_BODY_BYTES);
}

/**
 * Resolves on a later turn of the event loop, after the I/O that is already due: what a big body's heavy step
 * (decode, parse, validation, translation, its stored copy) waits for before it runs.
 *
 * One queue for the whole process, and one waiter let through per turn. With a plain setImmediate, every step
 * that became due in the same turn ran in the same turn: four 15 MB prompts whose bodies ended together were
 * parsed back to back, 4 x ~20 ms in one turn (80 ms measured, test/e2e/event-loop-bound.e2e.spec.ts). Through the
 * queue the steps of concurrent bodies take turns, first come first served, and between two of them the loop
 * answers everything else that is due. Small bodies never wait here (isPacedBody).
 */
export function nextTurn(): Promise<void> {
  return new Promise((resolve) => {
    waitingForTurn.push(resolve);
    if (waitingForTurn.length === 1) setImmediate(letOneThrough);
  });
}

const waitingForTurn: Array<() => void> = [];

/** Runs once per turn while steps wait: lets the first one run, and asks for the next turn for the rest. */
function letOneThrough(): void {
  const next = waitingForTurn.shift();
  // Scheduled from inside this turn's immediates, so it runs on the next turn, after its timers and I/O.
  if (waitingForTurn.length > 0) setImmediate(letOneThrough);
  next?.();
}

const shapesByBody = new WeakMap<object, BodyShape>();

/** Remembers what a parsed body measured: validation, the handlers and the pipeline read it to pace themselves. */
export function noteBodyShape(body: unknown, shape: BodyShape): void {
  if (typeof body === 'object' && body !== null) shapesByBody.set(body, shape);
}

/** How many values the body reader counted in this parsed body; 0 for a value it did not read. */
export function bodyValues(body: unknown): number {
  return shapeOf(body)?.values ?? 0;
}

function shapeOf(body: unknown): BodyShape | undefined {
  return typeof body === 'object' && body !== null ? shapesByBody.get(body) : undefined;
}
