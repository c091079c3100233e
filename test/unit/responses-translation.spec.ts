import { chatToResponse } from '../../src/endpoints/responses/chat-to-response';
import { ResponseEnvelope } from '../../src/endpoints/responses/response-object';
import { responsesToChat, type ToolNames } from '../../src/endpoints/responses/responses-to-chat';
import type { ChatCompletion } from '../../src/core/openai-types';

/**
 * The Responses API both ways for backends that do not serve it: a Responses request (instructions and input
 * items) -> the gateway's chat request, and a chat.completion -> the Response's output items, status and usage.
 * Shapes are OpenAI's (Responses and chat completions references), written out here.
 */
const translate = (fields: Record<string, unknown>, items: unknown[]) =>
  responsesToChat({ model: 'gpt-x', ...fields } as never, items as never);

describe('Responses request -> chat request', () => {
  it('instructions, messages of every role, settings and text.format', () => {
    const { chat, droppedTools } = translate(
      {
        instructions: 'Be brief.',
        stream: true,
        max_output_tokens: 500,
        temperature: 0.3,
        top_p: 0.8,
        user: 'u-7',
        parallel_tool_calls: false,
        text: { format: { type: 'json_object' } },
      },
      [
        { role: 'developer', content: 'Use metric units.' },
        {
          type: 'message',
          role: 'user',
          content: [
            { type: 'input_text', text: 'Hi' },
            { type: 'input_text', text: 'there' },
          ],
        },
        {
          type: 'message',
          role: 'assistant',
          content: [
            { type: 'output_text', text: 'Hello' },
            { type: 'refusal', refusal: '!' },
          ],
        },
        { role: 'user', content: 'Again' },
      ],
    );
    expect(chat).toEqual({
      model: 'gpt-x',
      messages: [
        { role: 'system', content: 'Be brief.' },
        { role: 'system', content: 'Use metric units.' },
        { role: 'user', content: 'Hi\nthere' },
        { role: 'assistant', content: 'Hello!' },
        { role: 'user', content: 'Again' },
      ],
      stream: true,
      max_completion_tokens: 500,
      temperature: 0.3,
      top_p: 0.8,
      user: 'u-7',
      parallel_tool_calls: false,
      response_format: { type: 'json_object' },
    });
    expect(droppedTools).toEqual([]);
  });

  it('a json_schema format keeps its name, schema, strict and description', () => {
    const schema = { type: 'object', properties: { a: { type: 'string' } } };
    expect(
      translate(
        { text: { format: { type: 'json_schema', name: 'out', schema, strict: true, description: 'd' } } },
        [],
      ).chat.response_format,
    ).toEqual({ type: 'json_schema', json_schema: { name: 'out', schema, strict: true, description: 'd' } });
    expect(
      translate({ text: { format: { type: 'json_schema', name: 'out', schema } } }, []).chat.response_format,
    ).toEqual({
      type: 'json_schema',
      json_schema: { name: 'out', schema },
    });
    expect(Object.hasOwn(translate({ text: { format: { type: 'text' } } }, []).chat, 'response_format')).toBe(
      false,
    );
  });

  it('parallel function calls are one assistant turn; their outputs are tool messages', () => {
    const { chat } = translate({}, [
      { role: 'user', content: 'Weather and time?' },
      { type: 'function_call', call_id: 'call_1', name: 'get_weather', arguments: '{"city":"Paris"}' },
      { type: 'function_call', call_id: 'call_2', name: 'now', namespace: 'clock', arguments: '{}' },
      { type: 'function_call_output', call_id: 'call_1', output: '18C' },
      { type: 'function_call_output', call_id: 'call_2', output: [{ type: 'input_text', text: '12:00' }] },
      { type: 'reasoning', summary: [] },
    ]);
    expect(chat.messages).toEqual([
      { role: 'user', content: 'Weather and time?' },
      {
        role: 'assistant',
        content: null,
        tool_calls: [
          {
            id: 'call_1',
            type: 'function',
            function: { name: 'get_weather', arguments: '{"city":"Paris"}' },
          },
          { id: 'call_2', type: 'function', function: { name: 'clock__now', arguments: '{}' } },
        ],
      },
      { role: 'tool', tool_call_id: 'call_1', content: '18C' },
      { role: 'tool', tool_call_id: 'call_2', content: '12:00' },
    ]);
  });

  it('a call without its output, or an output without its call, is refused as OpenAI refuses it', () => {
    expect(() =>
      translate({}, [{ type: 'function_call', call_id: 'c1', name: 'f', arguments: '{}' }]),
    ).toThrow(
      expect.objectContaining({
        code: 'invalid_request',
        message: 'No tool output found for function call c1.',
      }),
    );
    expect(() => translate({}, [{ type: 'function_call_output', call_id: 'c2', output: 'x' }])).toThrow(
      expect.objectContaining({
        code: 'invalid_request',
        message: 'No tool call found for function call output with call_id c2.',
      }),
    );
  });

  it('images and files inline; a part that needs OpenAI file storage is refused', () => {
    const { chat } = translate({}, [
      {
        role: 'user',
        content: [
          { type: 'input_text', text: 'See' },
          { type: 'input_image', image_url: 'https://example.test/a.png', detail: 'low' },
          { type: 'input_image', image_url: 'data:image/png;base64,AA', detail: 'original' },
          { type: 'input_file', file_data: 'data:application/pdf;base64,JV', filename: 'a.pdf' },
          { type: 'input_file', file_data: 'data:application/pdf;base64,JW' },
        ],
      },
    ]);
    expect(chat.messages).toEqual([
      {
        role: 'user',
        content: [
          { type: 'text', text: 'See' },
          { type: 'image_url', image_url: { url: 'https://example.test/a.png', detail: 'low' } },
          { type: 'image_url', image_url: { url: 'data:image/png;base64,AA' } },
          { type: 'file', file: { file_data: 'data:application/pdf;base64,JV', filename: 'a.pdf' } },
          { type: 'file', file: { file_data: 'data:application/pdf;base64,JW' } },
        ],
      },
    ]);
    expect(() =>
      translate({}, [{ role: 'user', content: [{ type: 'input_file', file_id: 'file-1' }] }]),
    ).toThrow(expect.objectContaining({ code: 'invalid_request', param: 'input' }));
  });

  it('reasoning.effort is a thinking budget (below max_output_tokens); none turns thinking off', () => {
    const thinking = (effort: string, max?: number) =>
      translate({ reasoning: { effort }, ...(max ? { max_output_tokens: max } : {}) }, []).chat.thinking;
    expect(thinking('minimal')).toEqual({ type: 'enabled', budget_tokens: 1024 });
    expect(thinking('low')).toEqual({ type: 'enabled', budget_tokens: 2048 });
    expect(thinking('medium')).toEqual({ type: 'enabled', budget_tokens: 8192 });
    expect(thinking('high')).toEqual({ type: 'enabled', budget_tokens: 16384 });
    expect(thinking('xhigh')).toEqual({ type: 'enabled', budget_tokens: 32768 });
    expect(thinking('high', 1000)).toEqual({ type: 'enabled', budget_tokens: 999 });
    expect(thinking('high', 2)).toEqual({ type: 'enabled', budget_tokens: 1 });
    expect(thinking('high', 1)).toBeUndefined();
    expect(thinking('none')).toEqual({ type: 'disabled' });
    expect(Object.hasOwn(translate({}, []).chat, 'thinking')).toBe(false);
  });

  it('function tools (namespaced ones flattened), hosted tools dropped and named, tool_choice by name', () => {
    const { chat, toolNames, droppedTools } = translate(
      {
        tools: [
          {
            type: 'function',
            name: 'get_weather',
            description: 'Weather',
            parameters: { type: 'object' },
            strict: true,
          },
          { type: 'function', name: 'ping' },
          { type: 'web_search' },
          {
            type: 'namespace',
            name: 'clock',
            tools: [{ type: 'function', name: 'now' }, { type: 'file_search' }],
          },
        ],
        tool_choice: { type: 'function', name: 'now', namespace: 'clock' },
      },
      [],
    );
    expect(chat.tools).toEqual([
      {
        type: 'function',
        function: {
          name: 'get_weather',
          parameters: { type: 'object' },
          description: 'Weather',
          strict: true,
        },
      },
      { type: 'function', function: { name: 'ping', parameters: { type: 'object', properties: {} } } },
      { type: 'function', function: { name: 'clock__now', parameters: { type: 'object', properties: {} } } },
    ]);
    expect(droppedTools).toEqual(['web_search', 'file_search']);
    expect([...toolNames]).toEqual([
      ['get_weather', { name: 'get_weather' }],
      ['ping', { name: 'ping' }],
      ['clock__now', { name: 'now', namespace: 'clock' }],
    ]);
    expect(chat.tool_choice).toEqual({ type: 'function', function: { name: 'clock__now' } });
    const tools = [{ type: 'function', name: 'ping' }];
    expect(translate({ tools, tool_choice: 'required' }, []).chat.tool_choice).toBe('required');
    expect(
      translate({ tools, tool_choice: { type: 'function', name: 'ping' } }, []).chat.tool_choice,
    ).toEqual({
      type: 'function',
      function: { name: 'ping' },
    });
    expect(translate({ tools, tool_choice: { type: 'allowed_tools', tools: [] } }, []).chat.tool_choice).toBe(
      'auto',
    );
    expect(Object.hasOwn(translate({ tools }, []).chat, 'tool_choice')).toBe(false);
    // No function tool left: no tools and no tool_choice.
    const hosted = translate({ tools: [{ type: 'web_search' }], tool_choice: 'required' }, []).chat;
    expect([Object.hasOwn(hosted, 'tools'), Object.hasOwn(hosted, 'tool_choice')]).toEqual([false, false]);
  });
});

describe('chat.completion -> Response', () => {
  const envelope = () => new ResponseEnvelope({ model: 'gpt-x', input: 'hi' } as never);
  const completion = (message: Record<string, unknown>, finish: string | null, usage?: object) =>
    ({
      id: 'chatcmpl-1',
      object: 'chat.completion',
      created: 1,
      model: 'up',
      choices: [{ index: 0, message, finish_reason: finish }],
      usage,
    }) as unknown as ChatCompletion;

  it('reasoning, message and parallel function_call items in that order, with usage', () => {
    const names: ToolNames = new Map([['clock__now', { name: 'now', namespace: 'clock' }]]);
    const response = chatToResponse(
      completion(
        {
          role: 'assistant',
          content: 'Both:',
          reasoning_content: 'Two calls.',
          tool_calls: [
            {
              id: 'call_1',
              type: 'function',
              function: { name: 'get_weather', arguments: '{"city":"Paris"}' },
            },
            { id: 'call_2', type: 'function', function: { name: 'clock__now', arguments: '{}' } },
          ],
        },
        'tool_calls',
        {
          prompt_tokens: 40,
          completion_tokens: 12,
          total_tokens: 52,
          prompt_tokens_details: { cached_tokens: 10, cache_write_tokens: 5 },
          completion_tokens_details: { reasoning_tokens: 3 },
        },
      ),
      envelope(),
      names,
    );
    expect(response).toMatchObject({ object: 'response', status: 'completed', incomplete_details: null });
    const output = response.output as Array<Record<string, unknown>>;
    expect(output.map(({ id: _id, ...item }) => item)).toEqual([
      { type: 'reasoning', summary: [{ type: 'summary_text', text: 'Two calls.' }] },
      {
        type: 'message',
        status: 'completed',
        role: 'assistant',
        content: [{ type: 'output_text', text: 'Both:', annotations: [], logprobs: [] }],
      },
      {
        type: 'function_call',
        status: 'completed',
        call_id: 'call_1',
        name: 'get_weather',
        arguments: '{"city":"Paris"}',
      },
      {
        type: 'function_call',
        status: 'completed',
        call_id: 'call_2',
        name: 'now',
        arguments: '{}',
        namespace: 'clock',
      },
    ]);
    expect(output.map((item) => String(item.id).replace(/[0-9a-f]{48}$/, '<hex>'))).toEqual([
      'rs_<hex>',
      'msg_<hex>',
      'fc_<hex>',
      'fc_<hex>',
    ]);
    expect(response.usage).toEqual({
      input_tokens: 40,
      input_tokens_details: { cached_tokens: 10, cache_write_tokens: 5 },
      output_tokens: 12,
      output_tokens_details: { reasoning_tokens: 3 },
      total_tokens: 52,
    });
  });

  it.each([
    ['stop', 'completed', null],
    ['tool_calls', 'completed', null],
    ['length', 'incomplete', { reason: 'max_output_tokens' }],
    ['content_filter', 'incomplete', { reason: 'content_filter' }],
  ])('finish_reason %s: status %s', (finish, status, details) => {
    const response = chatToResponse(completion({ content: 'x' }, finish), envelope(), new Map());
    expect(response.status).toBe(status);
    expect(response.incomplete_details).toEqual(details);
  });

  it('no usage is all zeros; empty text and reasoning make no items; a call without id or arguments still has both', () => {
    const response = chatToResponse(
      completion(
        { content: '', reasoning_content: '', tool_calls: [{ function: { name: 'f' } }] },
        'tool_calls',
      ),
      envelope(),
      new Map(),
    );
    const output = response.output as Array<Record<string, unknown>>;
    expect(output).toHaveLength(1);
    expect(output[0]).toMatchObject({ type: 'function_call', name: 'f', arguments: '' });
    expect(output[0].call_id).toMatch(/^fc_[0-9a-f]{48}$/);
    expect(response.usage).toEqual({
      input_tokens: 0,
      input_tokens_details: { cached_tokens: 0, cache_write_tokens: 0 },
      output_tokens: 0,
      output_tokens_details: { reasoning_tokens: 0 },
      total_tokens: 0,
    });
  });
});
