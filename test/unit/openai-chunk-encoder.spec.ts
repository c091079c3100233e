import { OpenAiChunkEncoder } from '../../src/endpoints/chat-completions/openai-chunk-encoder';
import type { ChatCompletionChunk } from '../../src/core/openai-types';

/** What the relay gives the encoder for one upstream event: the parsed chunk and, when reusable, its text. */
const step = (raw: string) => ({ chunks: [JSON.parse(raw) as ChatCompletionChunk], raw });
const sent = (encoder: OpenAiChunkEncoder, raw: string) => {
  const out = encoder.event({ data: raw } as never, step(raw));
  expect(out.startsWith('data: ') && out.endsWith('\n\n')).toBe(true);
  return out.slice('data: '.length, -2);
};

describe('OpenAI chunk encoder', () => {
  const upstream = (extra = '') =>
    `{"id":"chatcmpl-1","object":"chat.completion.chunk","created":1,"model":"gpt-4o-2024-08-06","choices":[{"index":0,"delta":{"content":"caf\\u00e9 \\"model\\":\\"gpt-4o-2024-08-06\\""},"finish_reason":null}]${extra}}`;

  it('renames the model in the upstream text itself, keeping every other byte as sent', () => {
    const out = sent(new OpenAiChunkEncoder('team-alias', true), upstream());
    // The content's escapes are the upstream's (a serialiser would write é and leave the quotes escaped alike).
    expect(out).toBe(
      upstream().replace('"model":"gpt-4o-2024-08-06","choices"', '"model":"team-alias","choices"'),
    );
    expect(JSON.parse(out)).toEqual({ ...JSON.parse(upstream()), model: 'team-alias' });
  });

  it('drops `usage: null` for a client that did not ask for usage, renamed or not', () => {
    const out = sent(new OpenAiChunkEncoder('team-alias', false), upstream(',"usage":null'));
    expect(out).toBe(
      upstream().replace('"model":"gpt-4o-2024-08-06","choices"', '"model":"team-alias","choices"'),
    );
  });

  it('serialises the chunk again whenever a replacement could be wrong', () => {
    const cases = [
      // the same member inside a nested object too: which one is the chunk's is not a substring question
      '{"id":"c","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":{"content":"x"},"finish_reason":null,"meta":{"model":"m"}}]}',
      // only a nested one written plainly, the top-level one escaped
      '{"id":"c","object":"chat.completion.chunk","created":1,"model":"\\u006d","choices":[{"index":0,"delta":{},"finish_reason":null,"meta":{"model":"m"}}]}',
      // spacing a serialiser would not write
      '{"id":"c", "object":"chat.completion.chunk", "created":1, "model": "m", "choices":[{"index":0,"delta":{"content":"x"},"finish_reason":null}]}',
    ];
    for (const raw of cases) {
      const out = sent(new OpenAiChunkEncoder('alias', true), raw);
      expect(out).toBe(JSON.stringify({ ...JSON.parse(raw), model: 'alias' }));
    }
  });

  it('keeps renaming when the upstream names its model differently mid-stream', () => {
    const encoder = new OpenAiChunkEncoder('alias', true);
    for (const name of ['first', 'second', 'first']) {
      const raw = `{"id":"c","object":"chat.completion.chunk","created":1,"model":"${name}","choices":[]}`;
      expect(sent(encoder, raw)).toBe(raw.replace(`"model":"${name}"`, '"model":"alias"'));
    }
  });

  describe('the usage-only chunk goes out only when the client asked for it', () => {
    const usageChunk =
      '{"id":"c","object":"chat.completion.chunk","created":1,"model":"m","choices":[],"usage":{"prompt_tokens":2,"completion_tokens":3,"total_tokens":5}}';

    it('not asked: nothing at all is written for it (the gateway asked upstream for its own accounting)', () => {
      const encoder = new OpenAiChunkEncoder('alias', false);
      expect(encoder.event({ data: usageChunk } as never, step(usageChunk))).toBe('');
    });

    it('asked: it is written, renamed, with the upstream usage', () => {
      const out = sent(new OpenAiChunkEncoder('alias', true), usageChunk);
      expect(JSON.parse(out)).toEqual({ ...JSON.parse(usageChunk), model: 'alias' });
    });

    it('not asked: a chunk with choices and usage keeps its choices and loses the usage', () => {
      const raw =
        '{"id":"c","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":{},"finish_reason":"stop"}],"usage":{"prompt_tokens":2,"completion_tokens":3,"total_tokens":5}}';
      const out = JSON.parse(sent(new OpenAiChunkEncoder('alias', false), raw));
      expect(out).toEqual({
        id: 'c',
        object: 'chat.completion.chunk',
        created: 1,
        model: 'alias',
        choices: [{ index: 0, delta: {}, finish_reason: 'stop' }],
      });
    });
  });
});
