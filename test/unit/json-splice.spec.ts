import { spliceJson, topLevelMembers } from '../../src/core/json-splice';
import { seededRandom as random } from '../fuzz/chat-body-mutator';
import { jsonPiece, randomJson, writeJsonLikeClients } from '../fuzz/random-json';

/** Smaller values than the default: each body is spliced whole several times. */
const SMALL = { maxDepth: 3, items: 4, pieces: 6 };

describe('Upstream bodies from the client bytes (json-splice)', () => {
  it('gives the same JSON as a fresh serialisation, for 2,000 random bodies and random changes', () => {
    let copiedSome = 0;
    for (let seed = 1; seed <= 2000; seed++) {
      const next = random(seed);
      const client: Record<string, unknown> = {
        model: 'client-model',
        messages: [{ role: 'user', content: randomJson(next, 0, SMALL) }],
      };
      for (let i = 0; i < 4; i++) client[`${jsonPiece(next)}-${i}`] = randomJson(next, 1, SMALL);
      const bytes = Buffer.from(
        (next() < 0.2 ? '\ufeff' : '') + writeJsonLikeClients(client, next) + (next() < 0.5 ? '\n' : ''),
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
