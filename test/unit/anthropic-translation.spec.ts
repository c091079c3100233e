import { BackendConfig } from '../../src/config/config.schema';
import { AnthropicAdapter } from '../../src/providers/anthropic/anthropic.adapter';
import { AnthropicStreamMapper, statusOfErrorType } from '../../src/providers/anthropic/anthropic.stream';
import { messageOf } from '../../src/providers/anthropic/anthropic.response';
import { toAnthropicBody, validateForAnthropic } from '../../src/providers/anthropic/anthropic.request';
import { needsAdaptiveThinking } from '../../src/providers/anthropic/anthropic-models';
import type { ChatRequest } from '../../src/core/chat-request';
import { ModelConfig } from '../../src/config/config.schema';
import type { ChatCompletionChunk } from '../../src/core/openai-types';

/**
 * Anthropic Messages -> OpenAI chat, whole answers and whole streams. The events and bodies are written as
 * Anthropic's Messages and streaming docs show them ("Event types", "Streaming request with tool use"); the
 * expected OpenAI chunks are OpenAI's chat.completion.chunk shapes, written out here.
 */
const adapter = new AnthropicAdapter(
  'claude',
  Object.assign(new BackendConfig(), { type: 'anthropic', anthropicVersion: '2023-06-01' }),
);

/** A stream mapper as the adapter's decoder makes one: in-stream errors mapped by the adapter's own error mapping. */
const streamMapper = () =>
  new AnthropicStreamMapper((status, body) => adapter.mapError(status, JSON.stringify(body), {}));

const sse = (data: object) => ({ data: JSON.stringify(data), event: undefined, id: undefined });

/** Feeds a whole stream; returns every chunk's choices (or usage) and whether the last step said done. */
function stream(events: object[]) {
  const mapper = streamMapper();
  const chunks: ChatCompletionChunk[] = [];
  let done = false;
  for (const event of events) {
    const step = mapper.map(sse(event));
    chunks.push(...step.chunks);
    done = step.done === true;
  }
  return { chunks, done };
}

const messageStart = (usage: object = { input_tokens: 25, output_tokens: 1 }) => ({
  type: 'message_start',
  message: {
    id: 'msg_01XYZ',
    type: 'message',
    role: 'assistant',
    content: [],
    model: 'claude-sonnet-4-5',
    stop_reason: null,
    stop_sequence: null,
    usage,
  },
});

describe('Anthropic stream -> OpenAI chunks', () => {
  it('a text answer: role chunk, each text_delta as content, finish_reason from message_delta, then usage', () => {
    const { chunks, done } = stream([
      messageStart({ input_tokens: 25, output_tokens: 1, cache_read_input_tokens: 5 }),
      { type: 'content_block_start', index: 0, content_block: { type: 'text', text: '' } },
      { type: 'ping' },
      { type: 'content_block_delta', index: 0, delta: { type: 'text_delta', text: 'Hello' } },
      { type: 'content_block_delta', index: 0, delta: { type: 'text_delta', text: '!' } },
      { type: 'content_block_stop', index: 0 },
      {
        type: 'message_delta',
        delta: { stop_reason: 'end_turn', stop_sequence: null },
        usage: { output_tokens: 15 },
      },
      { type: 'message_stop' },
    ]);
    expect(done).toBe(true);
    for (const chunk of chunks) {
      expect(chunk).toMatchObject({
        id: 'msg_01XYZ',
        object: 'chat.completion.chunk',
        model: 'claude-sonnet-4-5',
      });
      expect(typeof chunk.created).toBe('number');
    }
    expect(chunks.map((c) => c.choices)).toEqual([
      [{ index: 0, delta: { role: 'assistant', content: '' }, finish_reason: null }],
      [{ index: 0, delta: { content: 'Hello' }, finish_reason: null }],
      [{ index: 0, delta: { content: '!' }, finish_reason: null }],
      [{ index: 0, delta: {}, finish_reason: 'stop' }],
      [],
    ]);
    // input 25 + cache read 5 = 30 prompt; output 15 (message_delta's cumulative count replaces message_start's 1).
    expect(chunks[4].usage).toEqual({
      prompt_tokens: 30,
      completion_tokens: 15,
      total_tokens: 45,
      prompt_tokens_details: { cached_tokens: 5, cache_write_tokens: 0 },
    });
    expect(chunks.map((c) => Object.hasOwn(c, 'usage'))).toEqual([false, false, false, false, true]);
  });

  it.each([
    ['end_turn', 'stop'],
    ['stop_sequence', 'stop'],
    ['pause_turn', 'stop'],
    ['max_tokens', 'length'],
    ['model_context_window_exceeded', 'length'],
    ['tool_use', 'tool_calls'],
    ['refusal', 'content_filter'],
  ])('message_delta stop_reason %s ends the stream with finish_reason %s', (stopReason, finishReason) => {
    const { chunks } = stream([
      messageStart(),
      { type: 'message_delta', delta: { stop_reason: stopReason }, usage: { output_tokens: 2 } },
    ]);
    expect(chunks[1].choices).toEqual([{ index: 0, delta: {}, finish_reason: finishReason }]);
  });

  it('a message_delta without a stop_reason carries usage only: no chunk, and the stream is not done', () => {
    const mapper = streamMapper();
    mapper.map(sse(messageStart()));
    expect(mapper.map(sse({ type: 'message_delta', delta: {}, usage: { output_tokens: 4 } }))).toEqual({
      chunks: [],
    });
    expect(mapper.map(sse({ type: 'message_stop' })).chunks[0].usage).toMatchObject({
      prompt_tokens: 25,
      completion_tokens: 4,
      total_tokens: 29,
    });
  });

  it('parallel tool calls: each tool_use block is its own call, numbered 0, 1, with its id, name and arguments', () => {
    const { chunks } = stream([
      messageStart(),
      { type: 'content_block_start', index: 0, content_block: { type: 'text', text: '' } },
      { type: 'content_block_delta', index: 0, delta: { type: 'text_delta', text: 'Checking.' } },
      { type: 'content_block_stop', index: 0 },
      {
        type: 'content_block_start',
        index: 1,
        content_block: { type: 'tool_use', id: 'toolu_01A', name: 'get_weather', input: {} },
      },
      {
        type: 'content_block_delta',
        index: 1,
        delta: { type: 'input_json_delta', partial_json: '{"location": "Paris"' },
      },
      { type: 'content_block_delta', index: 1, delta: { type: 'input_json_delta', partial_json: '}' } },
      { type: 'content_block_stop', index: 1 },
      {
        type: 'content_block_start',
        index: 2,
        content_block: { type: 'tool_use', id: 'toolu_01B', name: 'get_time', input: {} },
      },
      {
        type: 'content_block_delta',
        index: 2,
        delta: { type: 'input_json_delta', partial_json: '{"tz": "CET"}' },
      },
      { type: 'content_block_stop', index: 2 },
      { type: 'message_delta', delta: { stop_reason: 'tool_use' }, usage: { output_tokens: 60 } },
      { type: 'message_stop' },
    ]);
    expect(chunks.map((c) => c.choices[0]?.delta)).toEqual([
      { role: 'assistant', content: '' },
      { content: 'Checking.' },
      {
        tool_calls: [
          { index: 0, id: 'toolu_01A', type: 'function', function: { name: 'get_weather', arguments: '' } },
        ],
      },
      { tool_calls: [{ index: 0, function: { arguments: '{"location": "Paris"' } }] },
      { tool_calls: [{ index: 0, function: { arguments: '}' } }] },
      {
        tool_calls: [
          { index: 1, id: 'toolu_01B', type: 'function', function: { name: 'get_time', arguments: '' } },
        ],
      },
      { tool_calls: [{ index: 1, function: { arguments: '{"tz": "CET"}' } }] },
      {},
      undefined,
    ]);
    expect(chunks[7].choices[0].finish_reason).toBe('tool_calls');
  });

  it('thinking: thinking_delta as reasoning_content, then the whole block with its signature when it stops', () => {
    const { chunks } = stream([
      messageStart(),
      { type: 'content_block_start', index: 0, content_block: { type: 'thinking', thinking: '' } },
      { type: 'content_block_delta', index: 0, delta: { type: 'thinking_delta', thinking: 'Let me ' } },
      { type: 'content_block_delta', index: 0, delta: { type: 'thinking_delta', thinking: 'think.' } },
      { type: 'content_block_delta', index: 0, delta: { type: 'signature_delta', signature: 'EqQB' } },
      { type: 'content_block_delta', index: 0, delta: { type: 'signature_delta', signature: 'Kx9=' } },
      { type: 'content_block_stop', index: 0 },
      {
        type: 'content_block_start',
        index: 1,
        content_block: { type: 'redacted_thinking', data: 'EmwKAhgB' },
      },
      { type: 'content_block_stop', index: 1 },
      { type: 'content_block_start', index: 2, content_block: { type: 'text', text: 'Hi' } },
      { type: 'content_block_delta', index: 2, delta: { type: 'citations_delta', citation: {} } },
      { type: 'content_block_stop', index: 2 },
    ]);
    expect(chunks.map((c) => c.choices[0].delta)).toEqual([
      { role: 'assistant', content: '' },
      { reasoning_content: 'Let me ' },
      { reasoning_content: 'think.' },
      { thinking_blocks: [{ type: 'thinking', thinking: 'Let me think.', signature: 'EqQBKx9=' }] },
      { thinking_blocks: [{ type: 'redacted_thinking', data: 'EmwKAhgB' }] },
      { content: 'Hi' },
    ]);
  });

  it('usage: cache writes and reads are prompt tokens; thinking tokens are reasoning tokens', () => {
    const { chunks } = stream([
      messageStart({
        input_tokens: 10,
        output_tokens: 1,
        cache_creation_input_tokens: 200,
        cache_read_input_tokens: 300,
      }),
      {
        type: 'message_delta',
        delta: { stop_reason: 'end_turn' },
        usage: { output_tokens: 40, output_tokens_details: { thinking_tokens: 25 } },
      },
      { type: 'message_stop' },
    ]);
    expect(chunks[2]).toMatchObject({ choices: [] });
    expect(chunks[2].usage).toEqual({
      prompt_tokens: 510,
      completion_tokens: 40,
      total_tokens: 550,
      prompt_tokens_details: { cached_tokens: 300, cache_write_tokens: 200 },
      completion_tokens_details: { reasoning_tokens: 25 },
    });
  });

  it.each([
    ['invalid_request_error', 400, 'invalid_request'],
    ['authentication_error', 401, 'upstream_auth_failed'],
    ['permission_error', 403, 'upstream_auth_failed'],
    ['not_found_error', 404, 'upstream_error'],
    ['request_too_large', 413, 'invalid_request'],
    ['rate_limit_error', 429, 'rate_limit_exceeded'],
    ['api_error', 500, 'upstream_error'],
    ['timeout_error', 504, 'upstream_timeout'],
    ['overloaded_error', 529, 'upstream_unavailable'],
  ])('an in-stream error of type %s stands for HTTP %i (%s)', (type, status, code) => {
    expect(statusOfErrorType(type)).toBe(status);
    const mapper = streamMapper();
    mapper.map(sse(messageStart()));
    expect(() => mapper.map(sse({ type: 'error', error: { type, message: 'Overloaded' } }))).toThrow(
      expect.objectContaining({ code }),
    );
  });

  it('billing_error is 402 and an unknown error type is 500', () => {
    expect(statusOfErrorType('billing_error')).toBe(402);
    expect(statusOfErrorType('some_new_error')).toBe(500);
    expect(statusOfErrorType(undefined)).toBe(500);
  });

  it('an event that is not JSON is the backend failing', () => {
    const mapper = new AnthropicStreamMapper(() => {
      throw new Error('not an error event');
    });
    expect(() => mapper.map({ data: 'not json', event: undefined, id: undefined } as never)).toThrow(
      expect.objectContaining({ code: 'upstream_error' }),
    );
  });
});

describe('Anthropic stream: timestamps and events with members missing', () => {
  it('created is the Unix time in seconds when the stream began', () => {
    jest.spyOn(Date, 'now').mockReturnValue(1_750_000_000_999);
    try {
      const { chunks } = stream([messageStart()]);
      expect(chunks[0].created).toBe(1_750_000_000);
    } finally {
      jest.restoreAllMocks();
    }
  });

  it('deltas without their text, a message_start without id or model, and events before message_start', () => {
    const { chunks } = stream([
      { type: 'content_block_delta', index: 0, delta: { type: 'text_delta', text: 'early' } },
      { type: 'message_start', message: {} },
      { type: 'content_block_start', index: 0, content_block: { type: 'thinking' } },
      { type: 'content_block_delta', index: 0, delta: { type: 'thinking_delta' } },
      { type: 'content_block_delta', index: 0, delta: { type: 'signature_delta' } },
      { type: 'content_block_stop', index: 0 },
      { type: 'content_block_delta', index: 1, delta: { type: 'text_delta' } },
      { type: 'content_block_start', index: 2, content_block: { type: 'tool_use', id: 't', name: 'f' } },
      { type: 'content_block_delta', index: 2, delta: { type: 'input_json_delta' } },
      { type: 'content_block_delta', index: 9, delta: { type: 'input_json_delta', partial_json: '{}' } },
    ]);
    expect(chunks.map((c) => [c.id, c.model])).toEqual(Array(8).fill(['', '']));
    expect(chunks.map((c) => c.choices[0].delta)).toEqual([
      { content: 'early' },
      { role: 'assistant', content: '' },
      { reasoning_content: '' },
      { thinking_blocks: [{ type: 'thinking', thinking: '', signature: '' }] },
      { content: '' },
      { tool_calls: [{ index: 0, id: 't', type: 'function', function: { name: 'f', arguments: '' } }] },
      { tool_calls: [{ index: 0, function: { arguments: '' } }] },
      { tool_calls: [{ index: 0, function: { arguments: '{}' } }] },
    ]);
  });
});

describe('Anthropic Message -> OpenAI chat.completion', () => {
  it('text, thinking, redacted thinking and parallel tool_use blocks', () => {
    const completion = adapter.parseResponse({
      id: 'msg_01ABC',
      type: 'message',
      role: 'assistant',
      model: 'claude-sonnet-4-5',
      content: [
        { type: 'thinking', thinking: 'Two lookups.', signature: 'sig1' },
        { type: 'redacted_thinking', data: 'opaque' },
        { type: 'text', text: 'Looking ' },
        { type: 'text', text: 'both up.' },
        { type: 'tool_use', id: 'toolu_1', name: 'get_weather', input: { location: 'Paris' } },
        { type: 'tool_use', id: 'toolu_2', name: 'get_time', input: { tz: 'CET' } },
      ],
      stop_reason: 'tool_use',
      stop_sequence: null,
      usage: { input_tokens: 12, output_tokens: 30 },
    });
    expect(completion).toMatchObject({
      id: 'msg_01ABC',
      object: 'chat.completion',
      model: 'claude-sonnet-4-5',
      usage: { prompt_tokens: 12, completion_tokens: 30, total_tokens: 42 },
    });
    expect(completion.choices).toEqual([
      {
        index: 0,
        message: {
          role: 'assistant',
          content: 'Looking both up.',
          refusal: null,
          reasoning_content: 'Two lookups.',
          thinking_blocks: [
            { type: 'thinking', thinking: 'Two lookups.', signature: 'sig1' },
            { type: 'redacted_thinking', data: 'opaque' },
          ],
          tool_calls: [
            {
              id: 'toolu_1',
              type: 'function',
              function: { name: 'get_weather', arguments: '{"location":"Paris"}' },
            },
            { id: 'toolu_2', type: 'function', function: { name: 'get_time', arguments: '{"tz":"CET"}' } },
          ],
        },
        finish_reason: 'tool_calls',
        logprobs: null,
      },
    ]);
  });

  it('only tool calls: content is null; no blocks at all: content is the empty string', () => {
    expect(messageOf([{ type: 'tool_use', id: 't', name: 'f' }])).toEqual({
      role: 'assistant',
      content: null,
      refusal: null,
      tool_calls: [{ id: 't', type: 'function', function: { name: 'f', arguments: '{}' } }],
    });
    expect(messageOf([])).toEqual({ role: 'assistant', content: '', refusal: null });
    expect(messageOf([{ type: 'server_tool_use' }, { type: 'text' }])).toEqual({
      role: 'assistant',
      content: '',
      refusal: null,
    });
  });

  it('a Message without a stop_reason is finish_reason stop; one without content is malformed', () => {
    const completion = adapter.parseResponse({ content: [{ type: 'text', text: 'hi' }] });
    expect(completion.choices[0].finish_reason).toBe('stop');
    expect(completion.usage).toEqual({
      prompt_tokens: 0,
      completion_tokens: 0,
      total_tokens: 0,
      prompt_tokens_details: { cached_tokens: 0, cache_write_tokens: 0 },
    });
    expect(() => adapter.parseResponse({ id: 'msg_1' })).toThrow(
      expect.objectContaining({ code: 'upstream_error' }),
    );
  });
});

describe('OpenAI chat -> Anthropic thinking, by model (wire-formats.md D.2)', () => {
  const target = (upstreamModel: string) => ({
    upstreamModel,
    model: Object.assign(new ModelConfig(), { backend: 'claude', upstreamModel, thinking: 'native' }),
  });
  const chat = (extra: Partial<ChatRequest> & Record<string, unknown>): ChatRequest => ({
    model: 'm',
    messages: [{ role: 'user', content: 'Why?' }],
    ...extra,
  });
  /** The body's thinking members, after the validation the adapter runs first. */
  const thinkingOf = (upstreamModel: string, extra: Partial<ChatRequest> & Record<string, unknown>) => {
    validateForAnthropic(chat(extra), target(upstreamModel));
    const body = toAnthropicBody(chat(extra), target(upstreamModel), false);
    return { thinking: body.thinking, output_config: body.output_config };
  };
  const refusal = (upstreamModel: string, extra: Partial<ChatRequest> & Record<string, unknown>) => {
    try {
      validateForAnthropic(chat(extra), target(upstreamModel));
    } catch (error) {
      return error as { status: number; param: string };
    }
    throw new Error('not refused');
  };

  it('matches the adaptive-only models in their Anthropic, Bedrock and Vertex spellings, and no older model', () => {
    for (const id of [
      'claude-sonnet-5-5',
      'claude-sonnet-5-5@20260301',
      'us.anthropic.claude-sonnet-5-5-20260301-v1:0',
      'anthropic.claude-opus-4-8-v1:0',
      'global.anthropic.claude-opus-4-7',
      'claude-opus-4-7-20260115',
      'claude-opus-5',
      'claude-fable-5',
      'claude-mythos-preview',
    ])
      expect([id, needsAdaptiveThinking(id)]).toEqual([id, true]);
    for (const id of [
      'claude-sonnet-4-5',
      'claude-opus-4-6',
      'claude-sonnet-4-6@20260101',
      'us.anthropic.claude-sonnet-4-5-20250929-v1:0',
      'claude-opus-4-1@20250805',
      'claude-3-7-sonnet-20250219',
      'claude-echo',
    ])
      expect([id, needsAdaptiveThinking(id)]).toEqual([id, false]);
  });

  it('an adaptive-only model: reasoning_effort and budgets become adaptive thinking with output_config.effort', () => {
    const adaptive = (effort: string) => ({ thinking: { type: 'adaptive' }, output_config: { effort } });
    for (const [value, effort] of [
      ['minimal', 'low'],
      ['low', 'low'],
      ['medium', 'medium'],
      ['high', 'high'],
      ['xhigh', 'xhigh'],
      ['max', 'max'],
    ])
      expect(thinkingOf('claude-sonnet-5-5', { reasoning_effort: value })).toEqual(adaptive(effort));
    // A budget becomes the nearest effort; the budget rules (>= 1024, < max_tokens) are not asked for.
    for (const [budget, effort] of [
      [500, 'low'],
      [2048, 'low'],
      [8192, 'medium'],
      [16384, 'high'],
      [32768, 'high'],
    ] as const)
      expect(
        thinkingOf('us.anthropic.claude-sonnet-5-5-20260301-v1:0', {
          thinking: { type: 'enabled', budget_tokens: budget },
        }),
      ).toEqual(adaptive(effort));
    // The gateway's thinking option wins over reasoning_effort.
    expect(
      thinkingOf('claude-opus-4-8', {
        thinking: { type: 'enabled', budget_tokens: 2048 },
        reasoning_effort: 'high',
      }),
    ).toEqual(adaptive('low'));
    // Off: disabled, except where the model cannot stop thinking (nothing sent); nothing asked: nothing sent.
    expect(thinkingOf('claude-sonnet-5-5', { reasoning_effort: 'none' })).toEqual({
      thinking: { type: 'disabled' },
      output_config: undefined,
    });
    expect(thinkingOf('claude-sonnet-5-5@20260301', { thinking: { type: 'disabled' } }).thinking).toEqual({
      type: 'disabled',
    });
    expect(thinkingOf('claude-fable-5', { reasoning_effort: 'none' })).toEqual({
      thinking: undefined,
      output_config: undefined,
    });
    expect(thinkingOf('claude-sonnet-5-5', {})).toEqual({ thinking: undefined, output_config: undefined });
  });

  it('an adaptive-only model refuses, before any call, temperature other than 1, low top_p, top_k, unknown efforts', () => {
    expect(refusal('claude-sonnet-5-5', { temperature: 0.5 })).toMatchObject({
      status: 400,
      param: 'temperature',
    });
    expect(refusal('claude-sonnet-5-5', { top_p: 0.9 })).toMatchObject({ status: 400, param: 'top_p' });
    expect(refusal('claude-opus-4-7', { top_k: 40 })).toMatchObject({ status: 400, param: 'top_k' });
    expect(refusal('claude-sonnet-5-5', { reasoning_effort: 'extreme' })).toMatchObject({
      status: 400,
      param: 'reasoning_effort',
    });
    expect(
      refusal('claude-sonnet-5-5', {
        reasoning_effort: 'low',
        tools: [{ type: 'function', function: { name: 'f' } }],
        tool_choice: 'required',
      }),
    ).toMatchObject({ status: 400, param: 'tool_choice' });
    expect(thinkingOf('claude-sonnet-5-5', { temperature: 1, top_p: 0.99 }).thinking).toBeUndefined();
  });

  it('an older model keeps manual budgets and their rules; reasoning_effort is not read', () => {
    expect(thinkingOf('claude-sonnet-4-5', { thinking: { type: 'enabled', budget_tokens: 2048 } })).toEqual({
      thinking: { type: 'enabled', budget_tokens: 2048 },
      output_config: undefined,
    });
    expect(thinkingOf('claude-sonnet-4-5', { thinking: { type: 'disabled' } }).thinking).toEqual({
      type: 'disabled',
    });
    expect(thinkingOf('claude-sonnet-4-5', { reasoning_effort: 'high', temperature: 0.2 })).toEqual({
      thinking: undefined,
      output_config: undefined,
    });
    expect(refusal('claude-sonnet-4-5', { thinking: { type: 'enabled', budget_tokens: 500 } })).toMatchObject(
      {
        status: 400,
        param: 'thinking.budget_tokens',
      },
    );
  });
});
