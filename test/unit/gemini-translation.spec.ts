import { GeminiStreamMapper } from '../../src/providers/gemini/gemini.stream';
import { BackendConfig } from '../../src/config/config.schema';
import { GeminiAdapter } from '../../src/providers/gemini/gemini.adapter';
import { splitParts } from '../../src/providers/gemini/gemini.response';
import type { ChatCompletionChunk } from '../../src/core/openai-types';

/**
 * Gemini generateContent / streamGenerateContent -> OpenAI chat, whole answers and whole streams. Bodies are
 * GenerateContentResponse as Gemini's API reference shows it (candidates[].content.parts, finishReason,
 * usageMetadata, modelVersion, responseId); the expected chunks are OpenAI's, written out here.
 */
const adapter = new GeminiAdapter(
  'gemini',
  Object.assign(new BackendConfig(), { type: 'gemini', baseUrl: 'http://gemini.invalid/v1beta' }),
);

const sse = (data: object) => ({ data: JSON.stringify(data), event: undefined, id: undefined });

/** A stream mapper as the adapter's decoder makes one for `n` candidates, errors mapped by the adapter. */
const streamMapper = (n = 1) =>
  new GeminiStreamMapper((status, body) => adapter.mapError(status, JSON.stringify(body), {}), n);

function stream(events: object[], n = 1) {
  const mapper = streamMapper(n);
  const chunks: ChatCompletionChunk[] = [];
  const dones: boolean[] = [];
  for (const event of events) {
    const step = mapper.map(sse(event));
    chunks.push(...step.chunks);
    dones.push(step.done === true);
  }
  return { chunks, dones, end: () => mapper.end?.() };
}

const CALL_ID = /^call_[A-Za-z0-9]{24}$/;

describe('Gemini stream -> OpenAI chunks', () => {
  it('text over two events: role chunk once, content, finish_reason, then the usage chunk with the last usageMetadata', () => {
    const { chunks, dones } = stream([
      {
        candidates: [{ content: { parts: [{ text: 'Hello' }], role: 'model' }, index: 0 }],
        usageMetadata: { promptTokenCount: 8, candidatesTokenCount: 1, totalTokenCount: 9 },
        modelVersion: 'gemini-2.5-flash',
      },
      {
        candidates: [
          { content: { parts: [{ text: ' world' }], role: 'model' }, finishReason: 'STOP', index: 0 },
        ],
        usageMetadata: { promptTokenCount: 8, candidatesTokenCount: 3, totalTokenCount: 11 },
        modelVersion: 'gemini-2.5-flash',
      },
    ]);
    expect(dones).toEqual([false, true]);
    expect(chunks.map((c) => c.choices)).toEqual([
      [{ index: 0, delta: { role: 'assistant', content: '' }, finish_reason: null }],
      [{ index: 0, delta: { content: 'Hello' }, finish_reason: null }],
      [{ index: 0, delta: { content: ' world' }, finish_reason: null }],
      [{ index: 0, delta: {}, finish_reason: 'stop' }],
      [],
    ]);
    for (const chunk of chunks)
      expect(chunk).toMatchObject({ object: 'chat.completion.chunk', model: 'gemini-2.5-flash' });
    expect(new Set(chunks.map((c) => c.id)).size).toBe(1);
    expect(chunks[0].id).toMatch(/^chatcmpl-[A-Za-z0-9]{29}$/);
    expect(chunks[4].usage).toEqual({
      prompt_tokens: 8,
      completion_tokens: 3,
      total_tokens: 11,
      prompt_tokens_details: { cached_tokens: 0 },
      completion_tokens_details: { reasoning_tokens: 0 },
    });
  });

  it.each([
    ['STOP', 'stop'],
    ['MAX_TOKENS', 'length'],
    ['SAFETY', 'content_filter'],
    ['RECITATION', 'content_filter'],
    ['PROHIBITED_CONTENT', 'content_filter'],
    ['MALFORMED_FUNCTION_CALL', 'stop'],
    ['OTHER', 'stop'],
  ])('finishReason %s ends the stream with finish_reason %s', (reason, finishReason) => {
    const { chunks, dones } = stream([
      { candidates: [{ content: { parts: [{ text: 'x' }] }, finishReason: reason, index: 0 }] },
    ]);
    expect(chunks[2].choices).toEqual([{ index: 0, delta: {}, finish_reason: finishReason }]);
    expect(dones).toEqual([true]);
  });

  it('parallel function calls, over two events: numbered 0, 1, 2 with distinct ids; STOP after them is tool_calls', () => {
    const { chunks } = stream([
      {
        candidates: [
          {
            content: {
              parts: [
                { functionCall: { name: 'get_weather', args: { city: 'Paris' } } },
                { functionCall: { name: 'get_time', args: { tz: 'CET' } } },
              ],
            },
          },
        ],
      },
      {
        candidates: [
          {
            content: { parts: [{ functionCall: { name: 'get_news', id: 'given-id' } }] },
            finishReason: 'STOP',
          },
        ],
        usageMetadata: { promptTokenCount: 20, candidatesTokenCount: 9 },
      },
    ]);
    const calls = chunks.flatMap((c) => (c.choices[0]?.delta.tool_calls as Array<Record<string, any>>) ?? []);
    expect(calls.map(({ id: _id, ...call }) => call)).toEqual([
      { index: 0, type: 'function', function: { name: 'get_weather', arguments: '{"city":"Paris"}' } },
      { index: 1, type: 'function', function: { name: 'get_time', arguments: '{"tz":"CET"}' } },
      { index: 2, type: 'function', function: { name: 'get_news', arguments: '{}' } },
    ]);
    expect(calls[0].id).toMatch(CALL_ID);
    expect(calls[1].id).toMatch(CALL_ID);
    expect(calls[0].id === calls[1].id).toBe(false);
    expect(calls[2].id).toBe('given-id');
    expect(chunks.filter((c) => c.choices[0]?.finish_reason).map((c) => c.choices[0].finish_reason)).toEqual([
      'tool_calls',
    ]);
  });

  it('thought parts are reasoning_content, and thoughtsTokenCount is completion and reasoning tokens', () => {
    const { chunks } = stream([
      {
        candidates: [
          {
            content: { parts: [{ text: 'Thinking it over.', thought: true }, { text: 'Answer.' }] },
            finishReason: 'STOP',
          },
        ],
        usageMetadata: {
          promptTokenCount: 10,
          candidatesTokenCount: 2,
          thoughtsTokenCount: 30,
          cachedContentTokenCount: 4,
          toolUsePromptTokenCount: 6,
        },
      },
    ]);
    expect(chunks.map((c) => c.choices[0]?.delta)).toEqual([
      { role: 'assistant', content: '' },
      { reasoning_content: 'Thinking it over.' },
      { content: 'Answer.' },
      {},
      undefined,
    ]);
    expect(chunks[4].usage).toEqual({
      prompt_tokens: 16,
      completion_tokens: 32,
      total_tokens: 48,
      prompt_tokens_details: { cached_tokens: 4 },
      completion_tokens_details: { reasoning_tokens: 30 },
    });
  });

  it('n = 2: each candidate has its own index and finish; the stream ends when both finished', () => {
    const { chunks, dones } = stream(
      [
        {
          candidates: [
            { content: { parts: [{ text: 'A' }] }, finishReason: 'STOP', index: 0 },
            { content: { parts: [{ text: 'B' }] }, index: 1 },
          ],
        },
        {
          candidates: [{ content: { parts: [{ text: 'B2' }] }, finishReason: 'MAX_TOKENS', index: 1 }],
          usageMetadata: { promptTokenCount: 3, candidatesTokenCount: 5 },
        },
      ],
      2,
    );
    expect(dones).toEqual([false, true]);
    expect(chunks.map((c) => c.choices)).toEqual([
      [{ index: 0, delta: { role: 'assistant', content: '' }, finish_reason: null }],
      [{ index: 0, delta: { content: 'A' }, finish_reason: null }],
      [{ index: 0, delta: {}, finish_reason: 'stop' }],
      [{ index: 1, delta: { role: 'assistant', content: '' }, finish_reason: null }],
      [{ index: 1, delta: { content: 'B' }, finish_reason: null }],
      [{ index: 1, delta: { content: 'B2' }, finish_reason: null }],
      [{ index: 1, delta: {}, finish_reason: 'length' }],
      [],
    ]);
    expect(chunks[7].usage).toMatchObject({ prompt_tokens: 3, completion_tokens: 5, total_tokens: 8 });
  });

  it('a body that ends with one of two candidates finished still gives the usage; one with none finished gives nothing', () => {
    const partly = stream(
      [
        {
          candidates: [{ content: { parts: [{ text: 'A' }] }, finishReason: 'STOP', index: 0 }],
          usageMetadata: { promptTokenCount: 3, candidatesTokenCount: 1 },
        },
      ],
      2,
    );
    expect(partly.dones).toEqual([false]);
    const ended = partly.end();
    expect(ended?.done).toBe(true);
    expect(ended?.chunks).toHaveLength(1);
    expect(ended?.chunks[0].usage).toMatchObject({ prompt_tokens: 3, completion_tokens: 1, total_tokens: 4 });
    const cut = stream([{ candidates: [{ content: { parts: [{ text: 'A' }] } }] }]);
    expect(cut.end()).toBeUndefined();
    const whole = stream([{ candidates: [{ content: { parts: [] }, finishReason: 'STOP' }] }]);
    expect(whole.end()).toBeUndefined();
  });

  it('a finishReason sent again for a finished candidate is not a second finish; FINISH_REASON_UNSPECIFIED is none', () => {
    const { chunks } = stream(
      [
        { candidates: [{ content: { parts: [] }, finishReason: 'STOP', index: 0 }] },
        { candidates: [{ content: { parts: [] }, finishReason: 'STOP', index: 0 }] },
        { candidates: [{ content: { parts: [] }, finishReason: 'FINISH_REASON_UNSPECIFIED', index: 1 }] },
      ],
      3,
    );
    expect(chunks.filter((c) => c.choices[0]?.finish_reason).length).toBe(1);
  });

  it('an error event is the error for its code', () => {
    const mapper = streamMapper();
    expect(() =>
      mapper.map(sse({ error: { code: 429, message: 'Resource exhausted', status: 'RESOURCE_EXHAUSTED' } })),
    ).toThrow(expect.objectContaining({ code: 'rate_limit_exceeded', status: 429 }));
    expect(() => mapper.map(sse({ error: { message: 'no code' } }))).toThrow(
      expect.objectContaining({ code: 'upstream_error', status: 502 }),
    );
  });
});

describe('Gemini stream: timestamps, model and usage when Gemini leaves them out', () => {
  it('created is the Unix time in seconds when the stream began; the model is the last modelVersion sent', () => {
    jest.spyOn(Date, 'now').mockReturnValue(1_750_000_000_999);
    try {
      const { chunks } = stream([
        { candidates: [{ content: { parts: [{ text: 'a' }] } }] },
        { candidates: [{ content: { parts: [{ text: 'b' }] } }], modelVersion: 'gemini-x' },
        { candidates: [{ content: { parts: [] }, finishReason: 'STOP' }] },
      ]);
      expect(chunks.map((c) => [c.created, c.model])).toEqual([
        [1_750_000_000, ''],
        [1_750_000_000, ''],
        [1_750_000_000, 'gemini-x'],
        [1_750_000_000, 'gemini-x'],
        [1_750_000_000, 'gemini-x'],
      ]);
      expect(chunks[4].usage).toEqual({
        prompt_tokens: 0,
        completion_tokens: 0,
        total_tokens: 0,
        prompt_tokens_details: { cached_tokens: 0 },
        completion_tokens_details: { reasoning_tokens: 0 },
      });
    } finally {
      jest.restoreAllMocks();
    }
  });

  it('an event without candidates (usage only) adds nothing but its usage', () => {
    const { chunks, dones } = stream([
      { candidates: [{ content: { parts: [{ text: 'a' }] }, finishReason: 'STOP' }] },
    ]);
    expect(dones).toEqual([true]);
    const mapper = streamMapper();
    expect(mapper.map(sse({ usageMetadata: { promptTokenCount: 1 } }))).toEqual({ chunks: [] });
    expect(chunks).toHaveLength(4);
  });
});

describe('Gemini GenerateContentResponse -> OpenAI chat.completion', () => {
  it('candidates become choices with their index; text, thought and function calls; usage', () => {
    const completion = adapter.parseResponse({
      candidates: [
        {
          content: {
            parts: [
              { text: 'Plan.', thought: true },
              { text: 'Calling ' },
              { text: 'both.' },
              { functionCall: { name: 'a', args: { x: 1 } } },
              { functionCall: { name: 'b', args: { y: 2 } } },
            ],
            role: 'model',
          },
          finishReason: 'STOP',
          index: 0,
        },
        { content: { parts: [{ text: 'cut' }] }, finishReason: 'MAX_TOKENS', index: 1 },
      ],
      usageMetadata: { promptTokenCount: 7, candidatesTokenCount: 11, thoughtsTokenCount: 2 },
      modelVersion: 'gemini-2.5-pro',
      responseId: 'abc123',
    });
    expect(completion).toMatchObject({
      id: 'chatcmpl-abc123',
      object: 'chat.completion',
      model: 'gemini-2.5-pro',
      usage: {
        prompt_tokens: 7,
        completion_tokens: 13,
        total_tokens: 20,
        completion_tokens_details: { reasoning_tokens: 2 },
      },
    });
    const [first, second] = completion.choices as Array<Record<string, any>>;
    expect(first.index).toBe(0);
    expect(first.finish_reason).toBe('tool_calls');
    expect(first.message).toMatchObject({
      role: 'assistant',
      content: 'Calling both.',
      refusal: null,
      reasoning_content: 'Plan.',
    });
    expect(first.message.tool_calls.map((c: any) => c.function)).toEqual([
      { name: 'a', arguments: '{"x":1}' },
      { name: 'b', arguments: '{"y":2}' },
    ]);
    expect(second).toEqual({
      index: 1,
      message: { role: 'assistant', content: 'cut', refusal: null },
      finish_reason: 'length',
      logprobs: null,
    });
  });

  it('only a function call: content null; nothing: empty content, finish stop, a made-up id', () => {
    expect(splitParts([{ functionCall: { name: 'f' } }]).toolCalls).toEqual([
      { id: expect.stringMatching(CALL_ID), type: 'function', function: { name: 'f', arguments: '{}' } },
    ]);
    expect(splitParts([{ text: 'a' }, { thought: true }, { text: 'b', thought: false }])).toEqual({
      text: 'ab',
      reasoning: '',
      toolCalls: [],
    });
    const completion = adapter.parseResponse({ candidates: [{ content: { parts: [] } }] });
    expect(completion.id).toMatch(/^chatcmpl-[A-Za-z0-9]{29}$/);
    expect(completion.choices[0]).toEqual({
      index: 0,
      message: { role: 'assistant', content: '', refusal: null },
      finish_reason: 'stop',
      logprobs: null,
    });
    expect(() => adapter.parseResponse({ promptFeedback: {} })).toThrow(
      expect.objectContaining({ code: 'upstream_error' }),
    );
  });
});
