import { closingQuote } from '../../src/core/json-bytes';
import { countTurns } from '../support/event-loop-turns';
import {
  bodyValues,
  isPacedBody,
  JsonShapeScanner,
  MAX_BODY_DEPTH,
  nextTurn,
  noteBodyShape,
  PACED_BODY_BYTES,
  PACED_BODY_VALUES,
} from '../../src/common/http/json-shape';
import { seededRandom } from '../fuzz/chat-body-mutator';
import { randomJson, writeJsonLikeClients } from '../fuzz/random-json';

/** What the scanner should find, from the parsed value. */
function reference(
  value: unknown,
  depth = 1,
  out = { values: 0, scalars: 0, depth: 0, keys: new Set<string>() },
) {
  if (typeof value === 'string') out.values++;
  else if (value === null || typeof value !== 'object') out.scalars++;
  else {
    out.values++;
    out.depth = Math.max(out.depth, depth);
    for (const [key, item] of Object.entries(value)) {
      if (!Array.isArray(value)) out.keys.add(key);
      reference(item, depth + 1, out);
    }
  }
  return out;
}

/** Feeds `bytes` to a scanner in chunks cut at random places (down to single bytes). */
function scan(
  bytes: Buffer,
  next: () => number,
  scanner = new JsonShapeScanner(MAX_BODY_DEPTH, 1e9, 1e9, 1e9),
): JsonShapeScanner {
  for (let start = 0; start < bytes.length;) {
    const size = next() < 0.3 ? 1 + Math.floor(next() * 3) : 1 + Math.floor(next() * 200);
    scanner.push(bytes.subarray(start, start + size));
    start += size;
  }
  return scanner;
}

describe('JsonShapeScanner (the body reader counts a body before it is parsed)', () => {
  it('counts values, scalars and distinct keys exactly, whatever the spacing, escapes and chunk boundaries (3,000 random documents)', () => {
    const next = seededRandom(32);
    for (let i = 0; i < 3000; i++) {
      const value = { root: randomJson(next, 0), more: [randomJson(next, 1), randomJson(next, 1)] };
      const expected = reference(value);
      const canonical = scan(Buffer.from(JSON.stringify(value)), next);
      expect([canonical.values, canonical.scalars, canonical.excess]).toEqual([
        expected.values,
        expected.scalars,
        undefined,
      ]);
      // Distinct keys are told apart by their bytes: exact for canonical JSON.
      expect((canonical as unknown as { keys: Set<number> }).keys.size).toBe(expected.keys.size);
      // Written with needless escapes the same keys may look different, never fewer.
      const escaped = scan(Buffer.from(writeJsonLikeClients(value, next)), next);
      expect([escaped.values, escaped.scalars]).toEqual([expected.values, expected.scalars]);
      expect((escaped as unknown as { keys: Set<number> }).keys.size).toBeGreaterThanOrEqual(
        expected.keys.size,
      );
    }
  });

  it('refuses at the first level past MAX_BODY_DEPTH, and not before', () => {
    const nested = (levels: number) => Buffer.from(`${'['.repeat(levels)}${']'.repeat(levels)}`);
    expect(scan(nested(MAX_BODY_DEPTH), Math.random).excess).toBeUndefined();
    expect(scan(nested(MAX_BODY_DEPTH + 1), Math.random).excess).toBe('depth');
    // Brackets inside strings are text.
    expect(scan(Buffer.from(JSON.stringify({ a: '['.repeat(1000) })), Math.random).excess).toBeUndefined();
  });

  it('stops at the first value, scalar or key past its limit', () => {
    const limited = () => new JsonShapeScanner(MAX_BODY_DEPTH, 10, 10, 3);
    expect(
      scan(Buffer.from(JSON.stringify(Array(9).fill('x'))), Math.random, limited()).excess,
    ).toBeUndefined(); // 10 values
    expect(scan(Buffer.from(JSON.stringify(Array(10).fill('x'))), Math.random, limited()).excess).toBe(
      'values',
    );
    expect(scan(Buffer.from(JSON.stringify(Array(11).fill(1))), Math.random, limited()).excess).toBe(
      'scalars',
    );
    expect(
      scan(
        Buffer.from(
          JSON.stringify([
            { a: 1, b: 1, c: 1 },
            { a: 1, c: 1 },
          ]),
        ),
        Math.random,
        limited(),
      ).excess,
    ).toBeUndefined(); // 3 distinct
    expect(
      scan(Buffer.from(JSON.stringify([{ a: 1, b: 1, c: 1 }, { d: 1 }])), Math.random, limited()).excess,
    ).toBe('keys');
    const stopped = limited();
    expect(stopped.push(Buffer.from(JSON.stringify(Array(20).fill('x'))))).toBe(false);
    expect(stopped.push(Buffer.from('[]'))).toBe(false);
  });

  it('skips long strings whole, escaped quotes and backslashes included, across chunk boundaries', () => {
    const next = seededRandom(7);
    for (let i = 0; i < 300; i++) {
      const text = Array.from(
        { length: 50 + Math.floor(next() * 3000) },
        () => ['a', '"', '\\', '\\"', '"\\', ']', '{', ',', 'é'][Math.floor(next() * 9)],
      ).join('');
      const scanner = scan(Buffer.from(JSON.stringify({ text, after: [1, 2], also: 'x' })), next);
      expect([scanner.values, scanner.scalars, scanner.excess]).toEqual([4, 2, undefined]); // the object, text, after, also
    }
  });
});

describe('nextTurn: the heavy steps of concurrent bodies take turns', () => {
  it('lets one waiting step through per turn of the event loop, first come first served', async () => {
    const loop = countTurns(); // bumped once per turn of the event loop
    const ran: Array<[step: number, turn: number]> = [];
    // Four bodies whose steps became due in the same turn (their ends read together), each with two steps.
    await Promise.all(
      [0, 1, 2, 3].map(async (body) => {
        await nextTurn();
        ran.push([body, loop.now]);
        await nextTurn();
        ran.push([body + 10, loop.now]);
      }),
    );
    loop.stop();
    expect(ran.map(([step]) => step)).toEqual([0, 1, 2, 3, 10, 11, 12, 13]);
    const turns = ran.map(([, at]) => at);
    expect(new Set(turns).size).toBe(turns.length); // never two in one turn
  });
});

describe('isPacedBody: which bodies take turns', () => {
  const shaped = (values: number, bytes: number) => {
    const body = {};
    noteBodyShape(body, { values, bytes });
    return body;
  };

  it('paces a body of many values, or of many bytes however few values (one long prompt)', () => {
    expect(isPacedBody(shaped(PACED_BODY_VALUES, 1000))).toBe(true);
    expect(isPacedBody(shaped(PACED_BODY_VALUES - 1, 1000))).toBe(false);
    expect(isPacedBody(shaped(5, PACED_BODY_BYTES))).toBe(true);
    expect(isPacedBody(shaped(5, PACED_BODY_BYTES - 1))).toBe(false);
    expect(bodyValues(shaped(7, PACED_BODY_BYTES))).toBe(7);
  });

  it('does not pace what the body reader did not read', () => {
    expect(isPacedBody({ model: 'x' })).toBe(false);
    expect(isPacedBody(undefined)).toBe(false);
    expect(bodyValues({})).toBe(0);
  });
});

describe('closingQuote: where a JSON string ends (json-bytes.ts, shared by the shape scanner and the splice)', () => {
  it.each([
    ['"abc"', 4],
    ['"a\\"b"', 5],
    ['"a\\\\"b"', 4],
    ['"a\\\\\\"b"', 7],
    ['"no end', -1],
    ['"escaped end\\"', -1],
  ])('%s ends at %s', (text, end) => {
    expect(closingQuote(Buffer.from(text), 1)).toBe(end);
  });

  it('does not look back before `from` (bytes before it are known content, not an escape)', () => {
    // From index 3, the backslash at 2 was the second half of a "\\" pair: the quote at 3 ends the string.
    expect(closingQuote(Buffer.from('"\\\\"'), 3)).toBe(3);
  });
});
