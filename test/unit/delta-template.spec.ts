import { OpenAIAdapter } from '../../src/providers/openai/openai.adapter';
import { BackendConfig } from '../../src/config/config.schema';
import { GatewayException } from '../../src/core/errors/gateway.exception';
import { OpenAiChunkEncoder } from '../../src/endpoints/chat-completions/openai-chunk-encoder';
import type { ChatCompletionChunk } from '../../src/core/openai-types';
import type { StreamStep } from '../../src/providers/provider-adapter';

const adapter = new OpenAIAdapter(
  'b',
  Object.assign(new BackendConfig(), { type: 'openai', baseUrl: 'http://u/v1' }),
);
const event = (data: string) => ({ data, event: undefined, id: undefined });

/** A small seeded generator (mulberry32), so a failure can be replayed. */
function random(seed: number) {
  return () => {
    seed = (seed + 0x6d2b79f5) | 0;
    let t = Math.imul(seed ^ (seed >>> 15), 1 | seed);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const PIECES = [
  ' the',
  'word',
  '"',
  '\\',
  '\\\\',
  'é',
  '日本',
  '😀',
  '\n',
  '\t',
  '\u0001',
  '/',
  '</script>',
  '"content":"x"',
  '\\"',
  '{',
  '}',
  ',',
  '',
];

/** JSON string text for `value` in one of the ways servers write it: plain, every non-ASCII escaped, `/` escaped. */
function encodeString(value: string, style: number): string {
  const plain = JSON.stringify(value);
  if (style === 1)
    return plain.replace(/[\u007f-\uffff]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`);
  if (style === 2) return plain.replace(/\//g, '\\/');
  return plain;
}

/** The upstream shapes seen in the wild: OpenAI (usage null, obfuscation), vLLM (logprobs null), Ollama (role every time), llama.cpp (other order). */
const SHAPES: Array<(content: string, pad: string) => string> = [
  (c, pad) =>
    `{"id":"chatcmpl-1","object":"chat.completion.chunk","created":1,"model":"gpt-4o-2024-08-06","service_tier":"default","system_fingerprint":"fp_1","choices":[{"index":0,"delta":{"content":${c}},"logprobs":null,"finish_reason":null}],"usage":null,"obfuscation":${pad}}`,
  (c) =>
    `{"id":"chatcmpl-2","object":"chat.completion.chunk","created":1,"model":"Qwen/Qwen3-8B","choices":[{"index":0,"delta":{"content":${c},"reasoning_content":null},"logprobs":null,"finish_reason":null}]}`,
  (c) =>
    `{"id":"chatcmpl-3","object":"chat.completion.chunk","created":1,"model":"llama3","system_fingerprint":"fp_ollama","choices":[{"index":0,"delta":{"role":"assistant","content":${c}},"finish_reason":null}]}`,
  (c) =>
    `{"choices":[{"finish_reason":null,"index":0,"delta":{"content":${c}}}],"created":1,"id":"chatcmpl-4","model":"gguf","system_fingerprint":"b1","object":"chat.completion.chunk"}`,
];

describe('content deltas read from a template', () => {
  it('reads exactly what JSON.parse reads, for 4,000 seeded random deltas in four upstream shapes', () => {
    const next = random(20261124);
    let templated = 0;
    let total = 0;
    for (const shape of SHAPES) {
      const mapper = adapter.chunkMapper();
      for (let i = 0; i < 1000; i++) {
        const content = Array.from(
          { length: Math.floor(next() * 4) },
          () => PIECES[Math.floor(next() * PIECES.length)],
        ).join('');
        const pad = 'abcdefgh'.slice(0, Math.floor(next() * 8));
        const data = shape(encodeString(content, Math.floor(next() * 3)), JSON.stringify(pad));
        const step = mapper.map(event(data));
        total++;
        if (step.delta) {
          templated++;
          expect(step.delta.text).toBe(content);
          expect(step.raw).toBe(data);
        }
        // Whichever way it was read, the chunk is the one JSON.parse reads (parsed lazily for a templated one).
        expect(step.chunks).toEqual([JSON.parse(data)]);
      }
    }
    // Nearly all of them skip the parse: only the first of each shape and the few whose escapes differ in
    // the fixed text are parsed (none here: the fixed text never changes).
    expect(templated).toBeGreaterThan(total * 0.99);
  });

  it('parses every event that is not the same plain delta: finish, usage, error, other members, invalid text', () => {
    const mapper = adapter.chunkMapper();
    const plain = (content: string, tail = '') =>
      `{"id":"c","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":{"content":"${content}"},"finish_reason":null}]${tail}}`;
    expect(mapper.map(event(plain('a'))).delta).toBeUndefined(); // learns the template
    expect(mapper.map(event(plain('b'))).delta?.text).toBe('b');
    const finished =
      '{"id":"c","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":{"content":"x"},"finish_reason":"stop"}]}';
    const finishStep = mapper.map(event(finished));
    expect(finishStep.delta).toBeUndefined();
    expect(finishStep.chunks).toMatchObject([{ choices: [{ finish_reason: 'stop' }] }]);
    const usage = plain('x', ',"usage":{"prompt_tokens":1,"completion_tokens":2,"total_tokens":3}');
    const usageStep = mapper.map(event(usage));
    expect(usageStep.delta).toBeUndefined();
    expect(usageStep.chunks).toMatchObject([{ usage: { total_tokens: 3 } }]);
    expect(() => mapper.map(event(plain('x', ',"error":{"message":"boom"}')))).toThrow(GatewayException);
    // A raw control character or an invalid escape is not JSON: parsed, so refused as before.
    expect(() => mapper.map(event(plain('a\u0001b')))).toThrow(/malformed stream event/);
    expect(() => mapper.map(event(plain('a\\qb')))).toThrow(/malformed stream event/);
    // A backslash at the end escapes the closing quote: the text no longer ends where the template does.
    expect(() => mapper.map(event(plain('a\\')))).toThrow(/malformed stream event/);
    // Anything after the chunk, or a member more: not the template's text.
    expect(() => mapper.map(event(`${plain('a')}x`))).toThrow(/malformed stream event/);
    expect(mapper.map(event(plain('a', ',"extra":1'))).delta).toBeUndefined();
    // That one was a plain delta too, so it became the template; the next plain one is parsed and learnt again.
    expect(mapper.map(event(plain('e', ',"extra":1'))).delta?.text).toBe('e');
    expect(mapper.map(event(plain('c'))).delta).toBeUndefined();
    expect(mapper.map(event(plain('d'))).delta?.text).toBe('d');
  });

  it('learns no template from a chunk whose fixed text has escapes or a second content key', () => {
    const mapper = adapter.chunkMapper();
    const escaped =
      '{"id":"c\\u0031","model":"m","choices":[{"index":0,"delta":{"content":"a"},"finish_reason":null}]}';
    mapper.map(event(escaped));
    expect(mapper.map(event(escaped.replace('"a"', '"b"'))).delta).toBeUndefined();
    const twice =
      '{"id":"c","model":"m","choices":[{"index":0,"delta":{"content":"a"},"logprobs":{"content":null},"finish_reason":null}]}';
    mapper.map(event(twice));
    expect(mapper.map(event(twice.replace('"a"', '"b"'))).delta).toBeUndefined();
  });
});

describe('the OpenAI encoder on templated deltas', () => {
  /** The encoder's output for one event, read the template way (mapper) and the parse-everything way. */
  const bothWays = (clientModel: string, includeUsage: boolean, events: string[]) => {
    const mapper = adapter.chunkMapper();
    const templated = new OpenAiChunkEncoder(clientModel, includeUsage);
    const parsed = new OpenAiChunkEncoder(clientModel, includeUsage);
    return events.map((data) => {
      const step: StreamStep = mapper.map(event(data));
      const reference = parsed.event(event(data) as never, {
        chunks: [JSON.parse(data) as ChatCompletionChunk],
        raw: data,
      });
      return { delta: step.delta, out: templated.event(event(data) as never, step), reference };
    });
  };

  it.each([
    ['renamed, usage asked for', 'team-alias', true],
    ['renamed, usage not asked for', 'team-alias', false],
    ['same name, usage not asked for', 'gpt-4o-2024-08-06', false],
  ])(
    'writes the same chunks as parsing each one (%s), keeping the upstream bytes of each value',
    (_what, model, includeUsage) => {
      const events = ['Hello', ' caf\\u00e9', ' \\"quoted\\"', ' end'].map(
        (content, i) =>
          `{"id":"chatcmpl-1","object":"chat.completion.chunk","created":1,"model":"gpt-4o-2024-08-06","choices":[{"index":0,"delta":{"content":"${content}"},"logprobs":null,"finish_reason":null}],"usage":null,"obfuscation":"${'xyz'.slice(0, i)}"}`,
      );
      const results = bothWays(model, includeUsage, events);
      expect(results.filter((r) => r.delta)).toHaveLength(3);
      for (const { out, reference } of results) {
        const body = out.slice('data: '.length, -2);
        expect(JSON.parse(body)).toEqual(JSON.parse(reference.slice('data: '.length, -2)));
        expect(JSON.parse(body).model).toBe(model);
        expect('usage' in JSON.parse(body)).toBe(includeUsage);
      }
      expect(results[1].out).toContain('"content":" caf\\u00e9"');
    },
  );

  it('falls back to serialising when the model member is not written the plain way', () => {
    const spaced = (content: string) =>
      `{"id":"c","model": "up","choices":[{"index":0,"delta":{"content":"${content}"},"finish_reason":null}]}`;
    const results = bothWays('alias', true, [spaced('a'), spaced('b')]);
    expect(results[1].delta).toBeDefined();
    expect(results[1].out).toBe(results[1].reference);
    expect(JSON.parse(results[1].out.slice(6, -2)).model).toBe('alias');
  });
});
