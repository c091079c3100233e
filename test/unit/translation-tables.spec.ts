import { messagesUsage, stopReasonOf } from '../../src/endpoints/messages/chat-to-messages';
import { AnthropicAdapter } from '../../src/providers/anthropic/anthropic.adapter';
import { AnthropicStreamMapper } from '../../src/providers/anthropic/anthropic.stream';
import {
  finishReasonOf as anthropicFinish,
  usageOf as anthropicUsage,
} from '../../src/providers/anthropic/anthropic.response';
import {
  finishReasonOf as geminiFinish,
  usageOf as geminiUsage,
} from '../../src/providers/gemini/gemini.response';
import { BackendConfig } from '../../src/config/config.schema';
import { GatewayException } from '../../src/core/errors/gateway.exception';

/**
 * Every translation table, entry by entry, both ways. The expected names are the vendors' documented ones
 * (docs/ and /work/shared/reference), written out here rather than read from the tables under test.
 */
describe('Anthropic stop_reason -> OpenAI finish_reason', () => {
  it.each([
    ['end_turn', 'stop'],
    ['stop_sequence', 'stop'],
    ['pause_turn', 'stop'],
    ['max_tokens', 'length'],
    ['model_context_window_exceeded', 'length'],
    ['tool_use', 'tool_calls'],
    ['refusal', 'content_filter'],
    ['a_reason_added_later', 'stop'],
  ])('%s -> %s', (stopReason, finishReason) => {
    expect(anthropicFinish(stopReason)).toBe(finishReason);
  });

  it('no stop_reason (a stream still going) is null, not stop', () => {
    expect(anthropicFinish(null)).toBeNull();
    expect(anthropicFinish(undefined)).toBeNull();
  });

  const adapter = new AnthropicAdapter(
    'claude',
    Object.assign(new BackendConfig(), { type: 'anthropic', anthropicVersion: '2023-06-01' }),
  );

  it('a non-streamed Message cut at max_tokens is finish_reason length', () => {
    const completion = adapter.parseResponse({
      id: 'msg_1',
      model: 'claude-x',
      content: [{ type: 'text', text: 'cut sh' }],
      stop_reason: 'max_tokens',
      usage: { input_tokens: 5, output_tokens: 2 },
    });
    expect(completion.choices[0].finish_reason).toBe('length');
    expect(completion.usage).toMatchObject({ prompt_tokens: 5, completion_tokens: 2, total_tokens: 7 });
  });

  it('a streamed Message cut at max_tokens ends with finish_reason length', () => {
    const mapper = new AnthropicStreamMapper(() => new GatewayException('upstream_error', 'x'));
    const event = (data: object) => ({ data: JSON.stringify(data), event: undefined, id: undefined });
    mapper.map(event({ type: 'message_start', message: { id: 'msg_1', model: 'm', usage: {} } }));
    const step = mapper.map(
      event({ type: 'message_delta', delta: { stop_reason: 'max_tokens' }, usage: { output_tokens: 3 } }),
    );
    expect(step.chunks[0].choices[0].finish_reason).toBe('length');
  });
});

describe('OpenAI finish_reason -> Anthropic stop_reason (chat answers given to Messages clients)', () => {
  it.each([
    ['stop', 'end_turn'],
    ['length', 'max_tokens'],
    ['tool_calls', 'tool_use'],
    ['function_call', 'tool_use'],
    ['content_filter', 'refusal'],
    ['something_new', 'end_turn'],
    [null, 'end_turn'],
    [undefined, 'end_turn'],
  ])('%s -> %s', (finishReason, stopReason) => {
    expect(stopReasonOf(finishReason)).toBe(stopReason);
  });
});

describe('Gemini finishReason -> OpenAI finish_reason', () => {
  it.each([
    ['STOP', 'stop'],
    ['MAX_TOKENS', 'length'],
    ['SAFETY', 'content_filter'],
    ['RECITATION', 'content_filter'],
    ['BLOCKLIST', 'content_filter'],
    ['PROHIBITED_CONTENT', 'content_filter'],
    ['SPII', 'content_filter'],
    ['IMAGE_SAFETY', 'content_filter'],
    ['LANGUAGE', 'content_filter'],
    ['MALFORMED_FUNCTION_CALL', 'stop'],
    ['OTHER', 'stop'],
    ['A_REASON_ADDED_LATER', 'stop'],
  ])('%s -> %s', (reason, finishReason) => {
    expect(geminiFinish(reason, false)).toBe(finishReason);
  });

  it('STOP after function calls is tool_calls; other reasons stay themselves; unspecified is null', () => {
    expect(geminiFinish('STOP', true)).toBe('tool_calls');
    expect(geminiFinish('MAX_TOKENS', true)).toBe('length');
    expect(geminiFinish('FINISH_REASON_UNSPECIFIED', false)).toBeNull();
    expect(geminiFinish(undefined, false)).toBeNull();
  });
});

describe('usage tables: total = prompt + completion both ways', () => {
  it('Anthropic -> OpenAI: cache reads and writes are prompt tokens; thinking is reasoning', () => {
    expect(
      anthropicUsage({
        input_tokens: 10,
        output_tokens: 7,
        cache_read_input_tokens: 100,
        cache_creation_input_tokens: 20,
        output_tokens_details: { thinking_tokens: 3 },
      }),
    ).toEqual({
      prompt_tokens: 130,
      completion_tokens: 7,
      total_tokens: 137,
      prompt_tokens_details: { cached_tokens: 100, cache_write_tokens: 20 },
      completion_tokens_details: { reasoning_tokens: 3 },
    });
    // Negative or missing counts are 0, and no reasoning details without thinking tokens.
    expect(anthropicUsage({ input_tokens: -1, cache_read_input_tokens: null })).toEqual({
      prompt_tokens: 0,
      completion_tokens: 0,
      total_tokens: 0,
      prompt_tokens_details: { cached_tokens: 0, cache_write_tokens: 0 },
    });
  });

  it('OpenAI -> Anthropic: the cached and written parts move out of input_tokens; totals stay equal', () => {
    expect(
      messagesUsage({
        prompt_tokens: 130,
        completion_tokens: 7,
        total_tokens: 137,
        prompt_tokens_details: { cached_tokens: 100, cache_write_tokens: 20 },
        completion_tokens_details: { reasoning_tokens: 3 },
      }),
    ).toMatchObject({
      input_tokens: 10,
      output_tokens: 7,
      cache_read_input_tokens: 100,
      cache_creation_input_tokens: 20,
      cache_creation: { ephemeral_5m_input_tokens: 20, ephemeral_1h_input_tokens: 0 },
      output_tokens_details: { thinking_tokens: 3 },
    });
    expect(messagesUsage(undefined)).toMatchObject({
      input_tokens: 0,
      output_tokens: 0,
      output_tokens_details: null,
    });
  });

  it('Gemini -> OpenAI: thoughts are completion and reasoning tokens; tool-use prompt tokens are prompt', () => {
    expect(
      geminiUsage({
        promptTokenCount: 10,
        toolUsePromptTokenCount: 5,
        candidatesTokenCount: 4,
        thoughtsTokenCount: 6,
        cachedContentTokenCount: 8,
      }),
    ).toEqual({
      prompt_tokens: 15,
      completion_tokens: 10,
      total_tokens: 25,
      prompt_tokens_details: { cached_tokens: 8 },
      completion_tokens_details: { reasoning_tokens: 6 },
    });
    // A negative or missing count is 0, never subtracted.
    expect(geminiUsage({ promptTokenCount: -5, candidatesTokenCount: 3 })).toMatchObject({
      prompt_tokens: 0,
      completion_tokens: 3,
      total_tokens: 3,
    });
  });
});
