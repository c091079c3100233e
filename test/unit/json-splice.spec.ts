import { spliceJson, topLevelMembers } from '../../src/providers/shared/json-splice';
import { seededRandom as random } from '../fuzz/chat-body-mutator';

const PIECES = [
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
  'model',
  '\u0000',
];

/** JSON text for `value` the way different clients write it: odd spacing, escapes where none are needed. */
function write(value: unknown, next: () => number): string {
  const space = () => [' ', '', '\n  ', '\t', ''][Math.floor(next() * 5)];
  if (typeof value === 'string') {
    let text = '"';
    for (const char of value) {
      const code = char.codePointAt(0)!;
      if (char === '"' || char === '\\') text += `\\${char}`;
      else if (code < 0x20 || next() < 0.2)
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
    return `[${space()}${value.map((item) => write(item, next)).join(`${space()},${space()}`)}${space()}]`;
  if (value && typeof value === 'object') {
    const members = Object.entries(value).map(
      ([key, item]) => `${write(key, next)}${space()}:${space()}${write(item, next)}`,
    );
    return `{${space()}${members.join(`,${space()}`)}${space()}}`;
  }
  return typeof value === 'number' && next() < 0.3 && Number.isInteger(value)
    ? `${value}.0e0`
    : JSON.stringify(value);
}

function value(next: () => number, depth: number): unknown {
  const kind = Math.floor(next() * (depth > 3 ? 4 : 6));
  if (kind === 0)
    return Array.from(
      { length: Math.floor(next() * 6) },
      () => PIECES[Math.floor(next() * PIECES.length)],
    ).join('');
  if (kind === 1) return Math.floor(next() * 2000) - 1000;
  if (kind === 2) return [true, false, null][Math.floor(next() * 3)];
  if (kind === 3) return next() * 10;
  if (kind === 4) return Array.from({ length: Math.floor(next() * 4) }, () => value(next, depth + 1));
  return Object.fromEntries(
    Array.from({ length: Math.floor(next() * 4) }, (_, i) => [
      `${PIECES[Math.floor(next() * PIECES.length)]}${i}`,
      value(next, depth + 1),
    ]),
  );
}

describe('Upstream bodies from the client bytes (json-splice)', () => {
  it('gives the same JSON as a fresh serialisation, for 2,000 random bodies and random changes', () => {
    let copiedSome = 0;
    for (let seed = 1; seed <= 2000; seed++) {
      const next = random(seed);
      const client: Record<string, unknown> = {
        model: 'client-model',
        messages: [{ role: 'user', content: value(next, 0) }],
      };
      for (let i = 0; i < 4; i++)
        client[`${PIECES[Math.floor(next() * PIECES.length)]}-${i}`] = value(next, 1);
      const bytes = Buffer.from(
        (next() < 0.2 ? '\ufeff' : '') + write(client, next) + (next() < 0.5 ? '\n' : ''),
        'utf8',
      );
      const parsed = JSON.parse(bytes.toString('utf8').replace(/^\ufeff/, '')) as Record<string, unknown>;
      expect(parsed).toEqual(client); // the generator writes valid JSON for what it made

      // What an adapter does: a shallow copy with some members replaced, added or removed; a nested change too.
      const body: Record<string, unknown> = { ...structuredCloneSome(parsed, next), model: 'upstream-model' };
      if (next() < 0.3) body.stream_options = { include_usage: true };
      if (next() < 0.3) delete body.messages;
      if (next() < 0.2) body['-0'] = undefined;
      for (const key of Object.keys(body)) if (next() < 0.3) body[key] = changedInside(body[key]);
      const spliced = spliceJson({ bytes, parsed }, body, 0);
      const unchanged = Object.keys(parsed).filter(
        (key) => body[key] !== undefined && JSON.stringify(body[key]) === JSON.stringify(parsed[key]),
      );
      expect([seed, spliced === undefined]).toEqual([seed, unchanged.length === 0]);
      if (!spliced) continue;
      expect([seed, JSON.parse(spliced.toString('utf8'))]).toEqual([seed, JSON.parse(JSON.stringify(body))]);
      const members = topLevelMembers(bytes)!;
      for (const [key, span] of members) {
        if (key !== 'model' && body[key] === parsed[key] && body[key] !== undefined) {
          expect(spliced.includes(bytes.subarray(span.start, span.end))).toBe(true);
          copiedSome++;
        }
      }
    }
    expect(copiedSome).toBeGreaterThan(2000);
  });

  it('copies an unchanged member byte for byte, escapes and spacing included', () => {
    const content = 'caf\\u00e9 \\"quoted\\" \\/ back\\\\slash '.repeat(3);
    const bytes = Buffer.from(
      `{ "model" : "a",\n "messages" : [ {"role":"user", "content": "${content}"} ] , "n": 1.0 }`,
    );
    const parsed = JSON.parse(bytes.toString()) as Record<string, unknown>;
    const spliced = spliceJson({ bytes, parsed }, { ...parsed, model: 'b' }, 0)!.toString();
    expect(spliced).toBe(`{"model":"b","messages" : [ {"role":"user", "content": "${content}"} ],"n": 1.0}`);
  });

  it('compares members by value: a DTO copy with undefined fields still copies, a changed nested value does not', () => {
    const bytes = Buffer.from('{"model":"a","messages":[{"role":"user","content":"hi"}],"stop":["x"]}');
    const parsed = JSON.parse(bytes.toString()) as {
      messages: Array<Record<string, unknown>>;
      stop: string[];
    };
    const dtoMessages = parsed.messages.map((m) => ({ ...m, name: undefined, tool_call_id: undefined }));
    const spliced = spliceJson(
      { bytes, parsed },
      { model: 'b', messages: dtoMessages, stop: ['y'] },
      0,
    )!.toString();
    expect(spliced).toBe('{"model":"b","messages":[{"role":"user","content":"hi"}],"stop":["y"]}');
  });

  it('writes everything anew when a top-level key is repeated (the upstream might read the other one)', () => {
    const bytes = Buffer.from('{"model":"a","messages":[],"model":"c"}');
    expect(topLevelMembers(bytes)).toBeUndefined();
    expect(
      spliceJson({ bytes, parsed: JSON.parse(bytes.toString()) }, { model: 'b', messages: [] }, 0),
    ).toBeUndefined();
  });

  it('finds a key written with escapes, so it is replaced and not sent twice', () => {
    const bytes = Buffer.from('{"mo\\u0064el":"a","messages":[]}');
    const parsed = JSON.parse(bytes.toString()) as Record<string, unknown>;
    expect([...topLevelMembers(bytes)!.keys()]).toEqual(['model', 'messages']);
    expect(spliceJson({ bytes, parsed }, { ...parsed, model: 'b' }, 0)!.toString()).toBe(
      '{"model":"b","messages":[]}',
    );
  });

  it('leaves small bodies, arrays and bodies with nothing unchanged to JSON.stringify', () => {
    const bytes = Buffer.from('{"model":"a","messages":[]}');
    const parsed = JSON.parse(bytes.toString()) as Record<string, unknown>;
    expect(spliceJson({ bytes, parsed }, { ...parsed, model: 'b' })).toBeUndefined(); // under SPLICE_MIN_BYTES
    expect(spliceJson({ bytes: Buffer.from('[1]'), parsed: [1] }, { model: 'b' }, 0)).toBeUndefined();
    expect(spliceJson({ bytes, parsed }, { model: 'b' }, 0)).toBeUndefined();
  });
});

/** A copy of a nested value with one change deep inside (a member that must not be copied). */
function changedInside(item: unknown): unknown {
  if (Array.isArray(item))
    return item.length ? [...item.slice(0, -1), changedInside(item[item.length - 1])] : ['changed'];
  if (item && typeof item === 'object') {
    const entries = Object.entries(item);
    if (!entries.length) return { changed: true };
    const [key, last] = entries[entries.length - 1];
    if (last === null || typeof last !== 'object') return Object.fromEntries(entries.slice(0, -1)); // a member dropped
    return { ...item, [key]: changedInside(last) };
  }
  return typeof item === 'string'
    ? `${item}!`
    : item === null
      ? 0
      : typeof item === 'number'
        ? item + 1
        : !item;
}

/** Some members replaced by an equal deep copy (compared by value, still copied), others kept as they are. */
function structuredCloneSome(parsed: Record<string, unknown>, next: () => number): Record<string, unknown> {
  return Object.fromEntries(
    Object.entries(parsed).map(([key, item]) => [key, next() < 0.3 ? structuredClone(item) : item]),
  );
}
