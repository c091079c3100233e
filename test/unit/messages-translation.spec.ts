import { createHash } from 'node:crypto';
import {
  chatToMessage,
  messageDeltaUsage,
  messageId,
  messagesUsage,
} from '../../src/endpoints/messages/chat-to-messages';
import { messagesToChat, thinkingOf } from '../../src/endpoints/messages/messages-to-chat';
import type { ChatCompletion } from '../../src/core/openai-types';

/**
 * The Messages API both ways for backends that do not speak it: Anthropic's request -> the gateway's chat
 * request, and a chat.completion -> Anthropic's Message. Shapes are Anthropic's (Messages API reference) and
 * OpenAI's (chat completions reference), written out here.
 */
const request = (fields: Record<string, unknown>) =>
  messagesToChat({ model: 'claude-x', max_tokens: 1024, messages: [], ...fields } as never);

describe('Messages request -> chat request', () => {
  it('system (string or blocks, billing header dropped), sampling settings, stop sequences, user id', () => {
    expect(
      request({
        system: 'x-anthropic-billing-header: cc_version=2.1; cch=abc;\nYou are terse.',
        messages: [{ role: 'user', content: 'Hi' }],
        stream: true,
        temperature: 0.2,
        top_p: 0.9,
        top_k: 40,
        stop_sequences: ['END', 'STOP'],
        metadata: { user_id: 'u-1' },
      }),
    ).toEqual({
      model: 'claude-x',
      max_tokens: 1024,
      messages: [
        { role: 'system', content: 'You are terse.' },
        { role: 'user', content: 'Hi' },
      ],
      stream: true,
      temperature: 0.2,
      top_p: 0.9,
      stop: ['END', 'STOP'],
      user: 'u-1',
    });
    expect(
      request({
        system: [
          { type: 'text', text: 'One.' },
          { type: 'text', text: 'Two.' },
        ],
        stream: false,
        stop_sequences: [],
        metadata: {},
      }),
    ).toEqual({
      model: 'claude-x',
      max_tokens: 1024,
      messages: [{ role: 'system', content: 'One.\nTwo.' }],
    });
    // A system that is only the billing header leaves no system message.
    expect(request({ system: 'x-anthropic-billing-header: cc_version=2.1;' }).messages).toEqual([]);
  });

  it('an assistant turn with text and parallel tool_use blocks, then the tool_result blocks as tool messages first', () => {
    const chat = request({
      messages: [
        { role: 'user', content: [{ type: 'text', text: 'Weather and time in Paris?' }] },
        {
          role: 'assistant',
          content: [
            { type: 'thinking', thinking: 'two tools', signature: 's' },
            { type: 'text', text: 'Checking.' },
            { type: 'tool_use', id: 'toolu_1', name: 'get_weather', input: { city: 'Paris' } },
            { type: 'tool_use', id: 'toolu_2', name: 'get_time', input: { tz: 'CET' } },
          ],
        },
        {
          role: 'user',
          content: [
            { type: 'tool_result', tool_use_id: 'toolu_1', content: '18C' },
            {
              type: 'tool_result',
              tool_use_id: 'toolu_2',
              content: [
                { type: 'text', text: 'unknown' },
                { type: 'text', text: 'zone' },
              ],
              is_error: true,
            },
            { type: 'text', text: 'Thanks' },
            { type: 'text', text: 'again' },
          ],
        },
      ],
    });
    expect(chat.messages).toEqual([
      { role: 'user', content: 'Weather and time in Paris?' },
      {
        role: 'assistant',
        content: 'Checking.',
        tool_calls: [
          {
            id: 'toolu_1',
            type: 'function',
            function: { name: 'get_weather', arguments: '{"city":"Paris"}' },
          },
          { id: 'toolu_2', type: 'function', function: { name: 'get_time', arguments: '{"tz":"CET"}' } },
        ],
      },
      { role: 'tool', tool_call_id: 'toolu_1', content: '18C' },
      { role: 'tool', tool_call_id: 'toolu_2', content: 'Error: unknown\nzone' },
      { role: 'user', content: 'Thanks\nagain' },
    ]);
  });

  it('an assistant turn of only a tool call has null content; an empty one has empty content', () => {
    const chat = request({
      messages: [
        { role: 'assistant', content: [{ type: 'tool_use', id: 't', name: 'f' }] },
        { role: 'assistant', content: [] },
        { role: 'user', content: [{ type: 'tool_result', tool_use_id: 't' }] },
      ],
    });
    expect(chat.messages).toEqual([
      {
        role: 'assistant',
        content: null,
        tool_calls: [{ id: 't', type: 'function', function: { name: 'f', arguments: '{}' } }],
      },
      { role: 'assistant', content: '' },
      { role: 'tool', tool_call_id: 't', content: '' },
    ]);
  });

  it('images and documents become chat content parts; blocks with no chat equivalent are dropped', () => {
    const chat = request({
      messages: [
        {
          role: 'user',
          content: [
            { type: 'text', text: 'Look:' },
            { type: 'image', source: { type: 'base64', media_type: 'image/png', data: 'iVBOR' } },
            { type: 'image', source: { type: 'url', url: 'https://example.test/a.png' } },
            { type: 'image', source: { type: 'file', file_id: 'f1' } },
            { type: 'document', source: { type: 'base64', media_type: 'application/pdf', data: 'JVBER' } },
            { type: 'document', title: 'Doc', source: { type: 'base64', data: 'JVBER' } },
            {
              type: 'document',
              title: 'Notes',
              source: { type: 'text', media_type: 'text/plain', data: 'abc' },
            },
            { type: 'document', source: { type: 'content', content: [{ type: 'text', text: 'inner' }] } },
            { type: 'document', title: 'Web', source: { type: 'url', url: 'https://example.test/d.pdf' } },
            { type: 'document', source: { type: 'file', file_id: 'f2' } },
            { type: 'search_result', source: 'x' },
          ],
        },
      ],
    });
    expect(chat.messages).toEqual([
      {
        role: 'user',
        content: [
          { type: 'text', text: 'Look:' },
          { type: 'image_url', image_url: { url: 'data:image/png;base64,iVBOR' } },
          { type: 'image_url', image_url: { url: 'https://example.test/a.png' } },
          {
            type: 'file',
            file: { filename: 'document.pdf', file_data: 'data:application/pdf;base64,JVBER' },
          },
          { type: 'file', file: { filename: 'Doc', file_data: 'data:application/pdf;base64,JVBER' } },
          { type: 'text', text: 'Notes\nabc' },
          { type: 'text', text: 'inner' },
          { type: 'text', text: 'Web\nhttps://example.test/d.pdf' },
        ],
      },
    ]);
  });

  it('a system-role message inside messages is a system message', () => {
    expect(request({ messages: [{ role: 'system', content: 'Be kind.' }] }).messages).toEqual([
      { role: 'system', content: 'Be kind.' },
    ]);
  });

  it('custom tools become functions; server tools and deferred tools are left out; tool_choice both ways', () => {
    const tools = [
      { name: 'get_weather', description: 'Weather', input_schema: { type: 'object' } },
      { type: 'custom', name: 'get_time', input_schema: { type: 'object', properties: {} } },
      { type: 'web_search_20250305', name: 'web_search' },
      { name: 'later', input_schema: { type: 'object' }, defer_loading: true },
    ];
    const chat = request({ tools, tool_choice: { type: 'any', disable_parallel_tool_use: true } });
    expect(chat.tools).toEqual([
      {
        type: 'function',
        function: { name: 'get_weather', description: 'Weather', parameters: { type: 'object' } },
      },
      { type: 'function', function: { name: 'get_time', parameters: { type: 'object', properties: {} } } },
    ]);
    expect(chat.tool_choice).toBe('required');
    expect(chat.parallel_tool_calls).toBe(false);
    expect(request({ tools, tool_choice: { type: 'auto' } }).tool_choice).toBe('auto');
    expect(request({ tools, tool_choice: { type: 'none' } }).tool_choice).toBe('none');
    expect(request({ tools, tool_choice: { type: 'tool', name: 'get_time' } }).tool_choice).toEqual({
      type: 'function',
      function: { name: 'get_time' },
    });
    const auto = request({ tools, tool_choice: { type: 'auto', disable_parallel_tool_use: false } });
    expect(Object.hasOwn(auto, 'parallel_tool_calls')).toBe(false);
    // No custom tool left: neither tools nor tool_choice.
    const none = request({ tools: [tools[2]], tool_choice: { type: 'any' } });
    expect([Object.hasOwn(none, 'tools'), Object.hasOwn(none, 'tool_choice')]).toEqual([false, false]);
  });

  it('thinking: enabled keeps its budget below max_tokens; adaptive gets a budget by effort; disabled stays off', () => {
    expect(
      request({ max_tokens: 4096, thinking: { type: 'enabled', budget_tokens: 2000 } }).thinking,
    ).toEqual({
      type: 'enabled',
      budget_tokens: 2000,
    });
    expect(
      request({ max_tokens: 1500, thinking: { type: 'enabled', budget_tokens: 2000 } }).thinking,
    ).toEqual({
      type: 'enabled',
      budget_tokens: 1499,
    });
    expect(request({ thinking: { type: 'disabled' } }).thinking).toEqual({ type: 'disabled' });
    const adaptive = (effort: string | undefined) =>
      thinkingOf(
        { messages: [], thinking: { type: 'adaptive' }, output_config: { effort } } as never,
        100_000,
      );
    expect(adaptive('low')).toEqual({ type: 'enabled', budget_tokens: 2048 });
    expect(adaptive('medium')).toEqual({ type: 'enabled', budget_tokens: 8192 });
    expect(adaptive('high')).toEqual({ type: 'enabled', budget_tokens: 16384 });
    expect(adaptive('max')).toEqual({ type: 'enabled', budget_tokens: 32768 });
    expect(adaptive(undefined)).toEqual({ type: 'enabled', budget_tokens: 16384 });
    expect(adaptive('unheard-of')).toEqual({ type: 'enabled', budget_tokens: 16384 });
    // count_tokens has no max_tokens: the budget as asked.
    expect(
      thinkingOf({ messages: [], thinking: { type: 'enabled', budget_tokens: 5000 } } as never, undefined),
    ).toEqual({ type: 'enabled', budget_tokens: 5000 });
    // max_tokens 1 leaves no room for thinking: off, and no thinking field at all.
    expect(
      Object.hasOwn(
        request({ max_tokens: 1, thinking: { type: 'enabled', budget_tokens: 1024 } }),
        'thinking',
      ),
    ).toBe(false);
    expect(request({ max_tokens: 2, thinking: { type: 'enabled', budget_tokens: 1024 } }).thinking).toEqual({
      type: 'enabled',
      budget_tokens: 1,
    });
    expect(Object.hasOwn(request({}), 'thinking')).toBe(false);
  });
});

describe('chat.completion -> Messages Message', () => {
  const completion = (message: Record<string, unknown>, finish: string | null, usage?: object) =>
    ({
      id: 'chatcmpl-abc.123',
      object: 'chat.completion',
      created: 1,
      model: 'upstream',
      choices: [{ index: 0, message, finish_reason: finish }],
      usage,
    }) as unknown as ChatCompletion;

  it('reasoning, text and parallel tool calls become thinking, text and tool_use blocks', () => {
    const message = chatToMessage(
      completion(
        {
          role: 'assistant',
          content: 'Checking both.',
          reasoning_content: 'Two calls.',
          tool_calls: [
            {
              id: 'call_1',
              type: 'function',
              function: { name: 'get_weather', arguments: '{"city":"Paris"}' },
            },
            { type: 'function', function: { name: 'get_time', arguments: '' } },
          ],
        },
        'tool_calls',
        {
          prompt_tokens: 50,
          completion_tokens: 20,
          total_tokens: 70,
          prompt_tokens_details: { cached_tokens: 30 },
        },
      ),
      'claude-x',
    );
    expect(message).toEqual({
      id: 'msg_chatcmpl-abc123',
      type: 'message',
      role: 'assistant',
      model: 'claude-x',
      content: [
        {
          type: 'thinking',
          thinking: 'Two calls.',
          signature: `switchyard:${createHash('sha256').update('Two calls.').digest('base64')}`,
        },
        { type: 'text', text: 'Checking both.', citations: null },
        {
          type: 'tool_use',
          id: 'call_1',
          name: 'get_weather',
          input: { city: 'Paris' },
          caller: { type: 'direct' },
        },
        { type: 'tool_use', id: 'toolu_1', name: 'get_time', input: {}, caller: { type: 'direct' } },
      ],
      stop_reason: 'tool_use',
      stop_sequence: null,
      stop_details: null,
      container: null,
      diagnostics: null,
      usage: {
        input_tokens: 20,
        output_tokens: 20,
        cache_creation_input_tokens: 0,
        cache_read_input_tokens: 30,
        cache_creation: { ephemeral_5m_input_tokens: 0, ephemeral_1h_input_tokens: 0 },
        inference_geo: null,
        output_tokens_details: null,
        server_tool_use: null,
        service_tier: 'standard',
        speed: null,
      },
    });
  });

  it.each([
    ['stop', 'end_turn'],
    ['length', 'max_tokens'],
    ['tool_calls', 'tool_use'],
    ['content_filter', 'refusal'],
  ])('finish_reason %s is stop_reason %s', (finish, stop) => {
    expect(chatToMessage(completion({ content: 'x' }, finish), 'm').stop_reason).toBe(stop);
  });

  it('empty text and reasoning give no blocks; no choice at all is an empty end_turn Message', () => {
    expect(chatToMessage(completion({ content: '', reasoning_content: '' }, 'stop'), 'm').content).toEqual(
      [],
    );
    const empty = chatToMessage({ id: 'msg_x', choices: [] } as unknown as ChatCompletion, 'm');
    expect(empty).toMatchObject({ id: 'msg_x', content: [], stop_reason: 'end_turn' });
  });

  it('message ids: msg_ kept, other ids prefixed and cleaned, none made up', () => {
    expect(messageId('msg_01ABC')).toBe('msg_01ABC');
    expect(messageId('chatcmpl-9x')).toBe('msg_chatcmpl-9x');
    expect(messageId('a b/c')).toBe('msg_abc');
    expect(messageId(undefined)).toMatch(/^msg_[A-Za-z0-9]{24}$/);
    expect(messageId('///')).toMatch(/^msg_[A-Za-z0-9]{24}$/);
  });

  it('usage: cache writes move out of input_tokens too; thinking is output_tokens_details; a delta has the counts only', () => {
    const usage = {
      prompt_tokens: 100,
      completion_tokens: 9,
      total_tokens: 109,
      prompt_tokens_details: { cached_tokens: 60, cache_write_tokens: 25 },
      completion_tokens_details: { reasoning_tokens: 4 },
    };
    expect(messagesUsage(usage)).toEqual({
      input_tokens: 15,
      output_tokens: 9,
      cache_creation_input_tokens: 25,
      cache_read_input_tokens: 60,
      cache_creation: { ephemeral_5m_input_tokens: 25, ephemeral_1h_input_tokens: 0 },
      inference_geo: null,
      output_tokens_details: { thinking_tokens: 4 },
      server_tool_use: null,
      service_tier: 'standard',
      speed: null,
    });
    expect(messageDeltaUsage(usage)).toEqual({
      input_tokens: 15,
      output_tokens: 9,
      cache_creation_input_tokens: 25,
      cache_read_input_tokens: 60,
      output_tokens_details: { thinking_tokens: 4 },
      server_tool_use: null,
    });
    // Inconsistent counts never make input_tokens negative.
    expect(
      messagesUsage({
        prompt_tokens: 5,
        completion_tokens: 0,
        total_tokens: 5,
        prompt_tokens_details: { cached_tokens: 9 },
      }).input_tokens,
    ).toBe(0);
  });
});
