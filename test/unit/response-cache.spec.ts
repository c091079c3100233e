import type { ServerResponse } from 'node:http';
import pino from 'pino';
import { AnswerRecorder, recordingEncoder } from '../../src/response-cache/answer-recorder';
import { clientCacheChoice } from '../../src/response-cache/cache-control';
import { cacheKey, canonicalJson, type CacheableRequest } from '../../src/response-cache/cache-key';
import { parseAnswer, serialiseAnswer } from '../../src/response-cache/cached-answer';
import { CachedRequest, type CacheResult } from '../../src/response-cache/cached-request';
import type { StreamEncoder } from '../../src/streaming/stream-encoder';
import { buildConfig } from '../support/config';
import { InMemoryResponseCacheEntries } from '../support/in-memory-response-cache';

const chat = (body: object, over: Partial<CacheableRequest> = {}): CacheableRequest => ({
  team: 'alpha',
  endpoint: '/v1/chat/completions',
  body,
  headers: {},
  ...over,
});
const base = { model: 'm', messages: [{ role: 'user', content: 'hi' }] };

describe('response cache key', () => {
  const key = (body: object, over?: Partial<CacheableRequest>) => cacheKey(chat(body, over));

  it('is a SHA-256, bounded whatever the body', async () => {
    expect(await key(base)).toMatch(/^[0-9a-f]{64}$/);
    expect(await key({ ...base, messages: [{ role: 'user', content: 'x'.repeat(100_000) }] })).toMatch(
      /^[0-9a-f]{64}$/,
    );
  });

  it('names the team: the same request of two teams has two keys', async () => {
    expect(await key(base, { team: 'beta' })).not.toBe(await key(base));
  });

  it('names the endpoint: the same body on two APIs has two keys', async () => {
    expect(await key(base, { endpoint: '/v1/responses' })).not.toBe(await key(base));
  });

  it.each([
    ['the model', { model: 'other' }],
    ['a message', { messages: [{ role: 'user', content: 'hello' }] }],
    ['a message role', { messages: [{ role: 'system', content: 'hi' }] }],
    ['temperature', { temperature: 0.5 }],
    ['top_p', { top_p: 0.5 }],
    ['max_tokens', { max_tokens: 10 }],
    ['n', { n: 2 }],
    ['seed', { seed: 1 }],
    ['stop', { stop: ['x'] }],
    ['tools', { tools: [{ type: 'function', function: { name: 'f' } }] }],
    ['tool_choice', { tool_choice: 'required' }],
    ['response_format', { response_format: { type: 'json_object' } }],
    ['reasoning_effort', { reasoning_effort: 'high' }],
    ['stream', { stream: true }],
    ['stream_options', { stream: true, stream_options: { include_usage: true } }],
  ])('changes with %s', async (_name, change) => {
    expect(await key({ ...base, ...change })).not.toBe(await key(base));
  });

  it.each([
    ['user', { user: 'someone' }],
    ['metadata', { metadata: { run: '1' } }],
    ['safety_identifier', { safety_identifier: 'h' }],
    ['prompt_cache_key', { prompt_cache_key: 'k' }],
    ['prompt_cache_retention', { prompt_cache_retention: '24h' }],
  ])('does not change with %s on chat completions', async (_name, change) => {
    expect(await key({ ...base, ...change })).toBe(await key(base));
  });

  it('keys what the Responses API echoes back (user, metadata)', async () => {
    const responses = { endpoint: '/v1/responses' };
    expect(await key({ ...base, user: 'u' }, responses)).not.toBe(await key(base, responses));
    expect(await key({ ...base, metadata: { a: '1' } }, responses)).not.toBe(await key(base, responses));
  });

  it("Messages: metadata is not keyed, Anthropic's version and beta headers are", async () => {
    const messages = { endpoint: '/v1/messages' };
    expect(await key({ ...base, metadata: { user_id: 'u' } }, messages)).toBe(await key(base, messages));
    expect(await key(base, { ...messages, headers: { 'anthropic-beta': 'context-1m-2025-08-07' } })).not.toBe(
      await key(base, messages),
    );
    expect(await key(base, { ...messages, headers: { 'anthropic-version': '2023-06-01' } })).not.toBe(
      await key(base, messages),
    );
    expect(await key(base, { ...messages, headers: { 'x-other': '1' } })).toBe(await key(base, messages));
  });

  it('does not depend on the order of members, at any depth', async () => {
    const reordered = { messages: [{ content: 'hi', role: 'user' }], model: 'm' };
    expect(await key(reordered)).toBe(await key(base));
    expect(canonicalJson({ b: 1, a: { d: [1, { f: 2, e: 3 }], c: null } })).toBe(
      '{"a":{"c":null,"d":[1,{"e":3,"f":2}]},"b":1}',
    );
  });

  it('keys a `__proto__` member like any other', async () => {
    const withProto = JSON.parse('{"z":1,"__proto__":{"x":1},"model":"m"}') as object;
    const withOther = JSON.parse('{"z":1,"__proto__":{"x":2},"model":"m"}') as object;
    expect(await key(withProto)).not.toBe(await key(withOther));
  });

  it('hashes a long conversation a megabyte per turn of the event loop, to the same key', async () => {
    const long = {
      ...base,
      messages: Array.from({ length: 300 }, () => ({ role: 'user', content: 'x'.repeat(10_000) })),
    };
    let turns = 0;
    const ticking = setInterval(() => turns++, 0);
    const [first, again] = [await key(long), await key(long)];
    clearInterval(ticking);
    expect(first).toBe(again);
    expect(turns).toBeGreaterThan(0); // 3 MB: the timer ran between its megabytes
    expect(first).not.toBe(await key({ ...long, messages: long.messages.slice(1) }));
  });

  it('hashes one long string a slice per turn, never splitting a surrogate pair between two slices', async () => {
    // The member's line is `"` + text + `"`: the emoji's first half is the last character of the first 1 MiB slice.
    const around = (emoji: string) => `${'a'.repeat((1 << 20) - 2)}${emoji}${'b'.repeat(10)}`;
    const embedding = (input: string) =>
      cacheKey({ ...chat({}), endpoint: '/v1/embeddings', body: { input } });
    let turns = 0;
    const ticking = setInterval(() => turns++, 0);
    const split = await embedding(around('\u{1F600}'));
    clearInterval(ticking);
    expect(turns).toBeGreaterThan(0);
    // Half a pair hashed alone is U+FFFD: a split would make the emoji's key that of two replacement characters.
    expect(split).not.toBe(await embedding(around('\uFFFD\uFFFD')));
    expect(split).toBe(await embedding(around('\u{1F600}')));
  });

  it('tells apart a member whose value is a one-item array from the same value bare', async () => {
    expect(await key({ ...base, stop: ['x'] })).not.toBe(await key({ ...base, stop: 'x' }));
    expect(await key({ ...base, stop: ['[1'] })).not.toBe(await key({ ...base, stop: '[1' }));
  });

  it('tells apart values a lossy serialisation would merge', async () => {
    expect(await key({ ...base, stop: ['a,b'] })).not.toBe(await key({ ...base, stop: ['a', 'b'] }));
    expect(await key({ ...base, temperature: 1 })).not.toBe(await key({ ...base, temperature: '1' }));
  });
});

describe("the client's Cache-Control", () => {
  it.each([
    [undefined, 'use'],
    ['max-age=0', 'use'],
    ['no-cache', 'no-cache'],
    ['No-Cache', 'no-cache'],
    ['max-age=0, no-cache', 'no-cache'],
    ['no-store', 'no-store'],
    ['no-cache, no-store', 'no-store'],
  ])('%s -> %s', (header, choice) => {
    expect(clientCacheChoice({ 'cache-control': header })).toBe(choice);
  });
});

describe('a cached answer', () => {
  const tokens = { prompt: 3, completion: 4, reasoning: 0, cached: 1, estimated: false };

  it('reads back as stored, bytes with newlines included', () => {
    const answer = { stream: true, body: 'data: {"a":1}\n\ndata: [DONE]\n\n', tokens, servedModel: 'm' };
    expect(parseAnswer(serialiseAnswer(answer))).toEqual(answer);
  });

  it('of another format version, or unreadable, is a miss', () => {
    expect(parseAnswer('{"v":0,"stream":false,"tokens":{}}\n{}')).toBeUndefined();
    expect(parseAnswer('not json\n{}')).toBeUndefined();
    expect(parseAnswer('no newline')).toBeUndefined();
  });
});

describe('a cached request', () => {
  const tokens = { prompt: 3, completion: 4, reasoning: 0, estimated: false };
  let entries: InMemoryResponseCacheEntries;
  let counted: CacheResult[];
  const response = () => {
    const headers: Record<string, string> = {};
    return {
      headers,
      res: {
        setHeader: (name: string, value: string) => (headers[name] = value),
      } as unknown as ServerResponse,
    };
  };
  const open = (request: CacheableRequest, res: ServerResponse, maxEntryBytes = 1000) =>
    new CachedRequest(
      { entries, count: (_model, result) => counted.push(result), logger: pino({ level: 'silent' }) },
      'm',
      { ttlSeconds: 60, maxEntryBytes },
      request,
      res,
    );
  const settle = () => new Promise((resolve) => setImmediate(resolve));

  beforeEach(() => {
    entries = new InMemoryResponseCacheEntries();
    counted = [];
  });

  it('misses, stores the whole answer with its TTL, then hits with it', async () => {
    const first = response();
    const miss = open(chat(base), first.res);
    expect(await miss.lookup()).toBeUndefined();
    expect(first.headers['x-switchyard-cache']).toBe('miss');
    miss.storeWhole('{"id":"x"}', { tokens, servedModel: 'm' });
    await settle();
    expect([...entries.entries.values()][0].ttlSeconds).toBe(60);
    const second = open(chat(base), response().res);
    const hit = await second.lookup();
    expect(hit).toEqual({ stream: false, body: '{"id":"x"}', tokens, servedModel: 'm' });
    expect(counted).toEqual(['miss', 'stored']); // a hit counts once the limits admit it
    second.served();
    expect(counted).toEqual(['miss', 'stored', 'hit']);
  });

  it("never answers one team with another's entry", async () => {
    open(chat(base), response().res).storeWhole('{}', { tokens, servedModel: 'm' });
    await settle();
    expect(await open(chat(base, { team: 'beta' }), response().res).lookup()).toBeUndefined();
  });

  it('no-cache skips the lookup but stores; no-store skips both', async () => {
    open(chat(base), response().res).storeWhole('{"old":1}', { tokens, servedModel: 'm' });
    await settle();
    const fresh = response();
    const noCache = open(chat(base, { headers: { 'cache-control': 'no-cache' } }), fresh.res);
    expect(await noCache.lookup()).toBeUndefined();
    expect(fresh.headers['x-switchyard-cache']).toBe('bypass');
    noCache.storeWhole('{"new":1}', { tokens, servedModel: 'm' });
    const noStore = open(chat(base, { headers: { 'cache-control': 'no-store' } }), response().res);
    expect(await noStore.lookup()).toBeUndefined();
    noStore.storeWhole('{"never":1}', { tokens, servedModel: 'm' });
    await settle();
    expect((await open(chat(base), response().res).lookup())?.body).toBe('{"new":1}');
  });

  it('does not store an answer over maxEntryBytes', async () => {
    const request = open(chat(base), response().res, 8);
    request.storeWhole('{"123456789":1}', { tokens, servedModel: 'm' });
    await settle();
    expect(entries.entries.size).toBe(0);
    expect(counted).toEqual(['too_large']);
  });

  it('a failing Redis is a miss, never an error', async () => {
    entries.failing = true;
    const { res, headers } = response();
    expect(await open(chat(base), res).lookup()).toBeUndefined();
    expect(headers['x-switchyard-cache']).toBe('miss');
    expect(counted).toEqual(['error']);
  });

  it('a Redis known to be down is skipped: no lookup, no store, each counted as an error', async () => {
    open(chat(base), response().res).storeWhole('{"kept":1}', { tokens, servedModel: 'm' });
    await settle();
    entries.up = false;
    entries.find = () => Promise.reject(new Error('must not be called while down'));
    const { res, headers } = response();
    const request = open(chat(base), res);
    expect(await request.lookup()).toBeUndefined();
    expect(headers['x-switchyard-cache']).toBe('miss');
    request.storeWhole('{"other":1}', { tokens, servedModel: 'm' });
    await settle();
    expect([...entries.entries.values()].map((e) => e.entry.split('\n')[1])).toEqual(['{"kept":1}']);
    expect(counted).toEqual(['stored', 'error', 'error']);
  });

  it("records a stream's events and closing events, not its error, and stores them", async () => {
    const inner: StreamEncoder = {
      event: (_event, step) => `data: ${String(step.chunks.length)}\n\n`,
      end: () => 'data: [DONE]\n\n',
      error: () => 'data: {"error":{}}\n\n',
    };
    const request = open(chat({ ...base, stream: true }), response().res);
    const encoder = request.recording(inner);
    const step = { chunks: [] };
    expect(encoder.event({ data: '' }, step)).toBe('data: 0\n\n');
    expect(encoder.end({})).toBe('data: [DONE]\n\n');
    request.storeStream({ tokens, servedModel: 'm' });
    await settle();
    const hit = await open(chat({ ...base, stream: true }), response().res).lookup();
    expect(hit).toMatchObject({ stream: true, body: 'data: 0\n\ndata: [DONE]\n\n' });
  });

  it('a recorder past its cap keeps nothing', () => {
    const recorder = new AnswerRecorder(10);
    const encoder = recordingEncoder({ event: () => '123456', end: () => '', error: () => '' }, recorder);
    encoder.event({ data: '' }, { chunks: [] });
    expect(recorder.text).toBe('123456');
    encoder.event({ data: '' }, { chunks: [] });
    expect(recorder.tooLarge).toBe(true);
    expect(recorder.text).toBe('');
  });
});

describe('response cache config', () => {
  const withCache = (responseCache: unknown, team: unknown = {}) =>
    buildConfig(
      {
        admin: { apiKey: 'k' },
        backends: { o: { type: 'openai', baseUrl: 'http://x/v1' } },
        models: { m: { backend: 'o', upstreamModel: 'x', responseCache } },
        teams: { t: team },
      },
      {},
    );

  it('takes a TTL, with a 1 MiB entry cap by default; a team may opt out', () => {
    const config = withCache({ ttlSeconds: 60 }, { responseCache: false });
    expect(config.models.m.responseCache).toMatchObject({ ttlSeconds: 60, maxEntryBytes: 1_048_576 });
    expect(config.teams.t.responseCache).toBe(false);
  });

  it.each([
    [{}, /ttlSeconds/],
    [{ ttlSeconds: 0 }, /ttlSeconds/],
    [{ ttlSeconds: 1.5 }, /ttlSeconds/],
    [{ ttlSeconds: 31 * 86_400 }, /ttlSeconds/],
    [{ ttlSeconds: 60, maxEntryBytes: 0 }, /maxEntryBytes/],
    [{ ttlSeconds: 60, maxEntryBytes: 65 * 1_048_576 }, /maxEntryBytes/],
  ])('refuses %j, naming the key', (settings, key) => {
    expect(() => withCache(settings)).toThrow(key);
  });

  it("refuses a team's responseCache that is not a boolean", () => {
    expect(() => withCache({ ttlSeconds: 60 }, { responseCache: 'no' })).toThrow(/responseCache/);
  });
});
