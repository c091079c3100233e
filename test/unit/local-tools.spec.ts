import { GatewayException } from '../../src/core/errors/gateway.exception';
import type { ChatMessage, ChatRequest } from '../../src/core/chat-request';
import { LocalAnswer } from '../../src/providers/local/local-answer';
import { historyOf } from '../../src/providers/local/local-history';
import { LocalReply, usageOf } from '../../src/providers/local/local-reply';
import { grammarSchemaOf, toolUseOf } from '../../src/providers/local/local-tools';

const fn = (name: string, parameters?: object, description?: string) => ({
  type: 'function',
  function: { name, ...(description ? { description } : {}), ...(parameters ? { parameters } : {}) },
});
const readTool = fn(
  'Read',
  {
    type: 'object',
    properties: { file_path: { type: 'string', description: 'absolute path' }, limit: { type: 'number' } },
    required: ['file_path'],
  },
  'Reads a file',
);
const bashTool = fn('Bash', {
  type: 'object',
  properties: { command: { type: 'string' } },
  required: ['command'],
});
const request = (
  extra: Partial<ChatRequest>,
  messages: ChatMessage[] = [{ role: 'user', content: 'hi' }],
): ChatRequest => ({ model: 'smollm2', messages, ...extra });

/** The 400 a call throws: its param and wire code. */
function refusal(call: () => unknown): { param: string | null; code: string | null; message: string } {
  try {
    call();
  } catch (error) {
    expect(error).toBeInstanceOf(GatewayException);
    const e = error as GatewayException;
    expect(e.status).toBe(400);
    return { param: e.param, code: e.wireCode, message: e.message };
  }
  throw new Error('expected a 400');
}

describe('local tools: OpenAI tools and tool_choice -> node-llama-cpp functions', () => {
  it('maps function tools to functions with a grammar schema, and auto leaves the choice to the model', () => {
    const use = toolUseOf(request({ tools: [readTool, bashTool] }), 'model');
    expect(use).toEqual({
      functions: {
        // Only required properties: node-llama-cpp's grammar generates every property it is given.
        Read: {
          description: 'Reads a file',
          params: {
            type: 'object',
            properties: { file_path: { type: 'string', description: 'absolute path' } },
          },
        },
        Bash: { params: { type: 'object', properties: { command: { type: 'string' } } } },
      },
      forceCall: false,
      maxParallelCalls: undefined,
    });
  });

  it('no tools, tools: [] and tool_choice none offer nothing; a tool without parameters takes an empty object', () => {
    expect(toolUseOf(request({}), 'callFirst')).toEqual({ forceCall: false });
    expect(toolUseOf(request({ tools: [] }), 'callFirst')).toEqual({ forceCall: false });
    expect(toolUseOf(request({ tools: [readTool], tool_choice: 'none' }), 'callFirst')).toEqual({
      forceCall: false,
    });
    expect(toolUseOf(request({ tools: [fn('now')] }), 'model').functions).toEqual({
      now: { params: { type: 'object', properties: {} } },
    });
  });

  it('required forces a call among all tools; a named function forces that one alone; parallel_tool_calls false allows one call', () => {
    expect(
      toolUseOf(request({ tools: [readTool, bashTool], tool_choice: 'required' }), 'model'),
    ).toMatchObject({ forceCall: true, functions: { Read: {}, Bash: {} } });
    const named = toolUseOf(
      request({
        tools: [readTool, bashTool],
        tool_choice: { type: 'function', function: { name: 'Bash' } },
        parallel_tool_calls: false,
      }),
      'model',
    );
    expect(Object.keys(named.functions!)).toEqual(['Bash']);
    expect(named).toMatchObject({ forceCall: true, maxParallelCalls: 1 });
    const allowed = toolUseOf(
      request({
        tools: [readTool, bashTool],
        tool_choice: {
          type: 'allowed_tools',
          allowed_tools: { mode: 'auto', tools: [{ type: 'function', function: { name: 'Read' } }] },
        },
      }),
      'model',
    );
    expect(allowed).toMatchObject({ forceCall: false });
    expect(Object.keys(allowed.functions!)).toEqual(['Read']);
  });

  it("callFirst: auto is a call when the latest turn is the user's and no result is in yet, an answer after; none and required are kept", () => {
    const afterResult: ChatMessage[] = [
      { role: 'user', content: 'read it' },
      {
        role: 'assistant',
        content: null,
        tool_calls: [{ id: 'c1', type: 'function', function: { name: 'Read', arguments: '{}' } }],
      },
      { role: 'tool', tool_call_id: 'c1', content: 'text' },
    ];
    expect(toolUseOf(request({ tools: [readTool] }), 'callFirst').forceCall).toBe(true);
    // Claude Code sends a system-role message after the user's: still the user's turn.
    expect(
      toolUseOf(
        request({ tools: [readTool] }, [
          { role: 'user', content: 'read it' },
          { role: 'system', content: 'env' },
        ]),
        'callFirst',
      ).forceCall,
    ).toBe(true);
    // After the results: an answer, the tools still in the prompt (the turn before's prompt, reused), no call taken.
    expect(toolUseOf(request({ tools: [readTool] }, afterResult), 'callFirst')).toMatchObject({
      forceCall: false,
      answerOnly: true,
      functions: { Read: {} },
    });
    expect(toolUseOf(request({ tools: [readTool] }, afterResult), 'model').answerOnly).toBeUndefined();
    // A user turn after the result was answered (Claude Code resuming an answer cut at max_tokens, or the human
    // again): no second forced call, which looped a small model until its context overflowed.
    const resumed: ChatMessage[] = [
      ...afterResult,
      { role: 'assistant', content: 'It says text' },
      { role: 'user', content: 'Output token limit hit. Resume directly.' },
    ];
    expect(toolUseOf(request({ tools: [readTool] }, resumed), 'callFirst')).toMatchObject({
      forceCall: false,
      answerOnly: true,
    });
    expect(
      toolUseOf(request({ tools: [readTool], tool_choice: 'required' }, afterResult), 'callFirst'),
    ).toMatchObject({ forceCall: true });
    expect(toolUseOf(request({ tools: [readTool] }), 'model').forceCall).toBe(false);
    expect(
      toolUseOf(request({ tools: [readTool], tool_choice: 'none' }), 'callFirst').functions,
    ).toBeUndefined();
  });

  it('refuses what OpenAI refuses, and tool types a local model cannot run, naming the field', () => {
    expect(
      refusal(() =>
        toolUseOf(
          request({ tools: [readTool], tool_choice: { type: 'function', function: { name: 'Write' } } }),
          'model',
        ),
      ),
    ).toMatchObject({ param: 'tool_choice.function.name', code: 'invalid_value' });
    expect(refusal(() => toolUseOf(request({ tool_choice: 'required' }), 'model'))).toMatchObject({
      param: 'tool_choice',
    });
    expect(
      refusal(() => toolUseOf(request({ tools: [{ type: 'custom', custom: { name: 'patch' } }] }), 'model')),
    ).toMatchObject({ param: 'tools[0].type', code: 'unsupported_parameter' });
    expect(refusal(() => toolUseOf(request({ tools: [fn('read file')] }), 'model'))).toMatchObject({
      param: 'tools[0].function.name',
    });
    expect(refusal(() => toolUseOf(request({ tools: [readTool, readTool] }), 'model'))).toMatchObject({
      param: 'tools[1].function.name',
    });
    expect(
      refusal(() =>
        toolUseOf(
          request({ tools: [{ type: 'function', function: { name: 'f', parameters: [] } }] }),
          'model',
        ),
      ),
    ).toMatchObject({ param: 'tools[0].function.parameters' });
    expect(
      refusal(() => toolUseOf(request({ tools: [readTool], tool_choice: 'sometimes' }), 'model')),
    ).toMatchObject({ param: 'tool_choice' });
    expect(
      refusal(() => toolUseOf(request({ tools: [readTool], parallel_tool_calls: 'yes' }), 'model')),
    ).toMatchObject({ param: 'parallel_tool_calls' });
  });
});

describe('local tools: JSON schema -> node-llama-cpp grammar schema', () => {
  const ANY = {
    oneOf: [
      { type: ['string', 'number', 'boolean', 'null'] },
      { type: 'array' },
      { type: 'object', additionalProperties: true },
    ],
  };

  it('keeps types, descriptions, enums, consts, string and array bounds, and date formats; drops what a grammar cannot say', () => {
    expect(
      grammarSchemaOf({ type: 'string', pattern: '^a', minLength: 1, maxLength: 9, description: 'd' }),
    ).toEqual({ type: 'string', minLength: 1, maxLength: 9, description: 'd' });
    expect(grammarSchemaOf({ type: 'string', format: 'date-time' })).toEqual({
      type: 'string',
      format: 'date-time',
    });
    expect(grammarSchemaOf({ type: 'string', format: 'uri' })).toEqual({ type: 'string' });
    expect(grammarSchemaOf({ type: 'integer', minimum: 1, maximum: 600000 })).toEqual({ type: 'integer' });
    expect(grammarSchemaOf({ enum: ['a', 'b', { no: 1 }] })).toEqual({ enum: ['a', 'b'] });
    expect(grammarSchemaOf({ const: 'x' })).toEqual({ const: 'x' });
    expect(
      grammarSchemaOf({
        type: 'array',
        items: { type: 'string' },
        minItems: 1,
        maxItems: 4,
        uniqueItems: true,
      }),
    ).toEqual({ type: 'array', items: { type: 'string' }, minItems: 1, maxItems: 4 });
    expect(grammarSchemaOf({ type: ['string', 'null'] })).toEqual({ type: ['string', 'null'] });
    expect(
      grammarSchemaOf({ type: ['object', 'null'], properties: { a: { type: 'string' } }, required: ['a'] }),
    ).toEqual({
      oneOf: [{ type: 'object', properties: { a: { type: 'string' } } }, { type: 'null' }],
    });
    expect(grammarSchemaOf({ type: 'string', nullable: true })).toEqual({
      oneOf: [{ type: 'string' }, { type: 'null' }],
    });
  });

  it('objects keep only their required properties; maps stay maps; no type at all is any JSON value (the grammar reads {} as null)', () => {
    const schema = {
      $schema: 'https://json-schema.org/draft/2020-12/schema',
      type: 'object',
      additionalProperties: false,
      properties: { a: { type: 'string' }, b: { type: 'boolean' } },
      required: ['a'],
    };
    expect(grammarSchemaOf(schema)).toEqual({ type: 'object', properties: { a: { type: 'string' } } });
    expect(grammarSchemaOf({ type: 'object', additionalProperties: { type: 'number' } })).toEqual({
      type: 'object',
      properties: {},
      additionalProperties: { type: 'number' },
    });
    expect(grammarSchemaOf({ type: 'object' })).toEqual({ type: 'object', properties: {} });
    expect(grammarSchemaOf({})).toEqual(ANY);
    expect(grammarSchemaOf({ properties: { x: {} }, required: ['x'] })).toEqual({
      type: 'object',
      properties: { x: ANY },
    });
  });

  it('anyOf/oneOf become oneOf (with shared keywords), allOf of objects is merged, $ref is resolved and bounded when recursive', () => {
    expect(grammarSchemaOf({ type: 'string', anyOf: [{ enum: ['a'] }, { minLength: 3 }] })).toEqual({
      oneOf: [{ enum: ['a'] }, { type: 'string', minLength: 3 }],
    });
    expect(
      grammarSchemaOf({
        allOf: [
          { type: 'object', properties: { a: { type: 'string' } }, required: ['a'] },
          { properties: { b: { type: 'integer' } }, required: ['b'] },
        ],
      }),
    ).toEqual({
      type: 'object',
      properties: { a: { type: 'string' }, b: { type: 'integer' } },
    });
    const defs = {
      type: 'object',
      properties: { kind: { $ref: '#/$defs/kind' }, other: { $ref: '#/definitions/missing' } },
      required: ['kind', 'other'],
      $defs: { kind: { enum: ['x', 'y'] } },
    };
    expect(grammarSchemaOf(defs)).toEqual({
      type: 'object',
      properties: { kind: { enum: ['x', 'y'] }, other: ANY },
    });
    // A tree that refers to itself: finite, ending in any value.
    const tree = {
      type: 'object',
      properties: { children: { type: 'array', items: { $ref: '#' } } },
      required: ['children'],
    };
    const converted = JSON.stringify(grammarSchemaOf(tree));
    expect(converted.length).toBeLessThan(10_000);
    expect(converted).toContain(JSON.stringify(ANY));
  });
});

describe('local history: OpenAI messages -> node-llama-cpp chat history', () => {
  const call = (id: string, name: string, args: string) => ({
    id,
    type: 'function',
    function: { name, arguments: args },
  });

  it('maps roles; a new answer is an empty model response at the end', () => {
    const history = historyOf([
      { role: 'system', content: 'Be brief.' },
      { role: 'developer', content: 'Use tools.' },
      {
        role: 'user',
        content: [
          { type: 'text', text: 'a' },
          { type: 'text', text: 'b' },
        ],
      },
      { role: 'assistant', content: 'ok' },
      { role: 'user', content: 'next' },
    ]);
    expect(history).toEqual([
      { type: 'system', text: 'Be brief.' },
      { type: 'system', text: 'Use tools.' },
      { type: 'user', text: 'a\nb' },
      { type: 'model', response: ['ok'] },
      { type: 'user', text: 'next' },
      { type: 'model', response: [] },
    ]);
  });

  it('keeps each call with its result; after tool results the answer continues the response holding the calls', () => {
    const messages: ChatMessage[] = [
      { role: 'user', content: 'read both' },
      {
        role: 'assistant',
        content: 'Reading.',
        tool_calls: [call('c1', 'Read', '{"file_path":"/a"}'), call('c2', 'Read', 'not json')],
      },
      { role: 'tool', tool_call_id: 'c2', content: 'B' },
      { role: 'tool', tool_call_id: 'c1', content: [{ type: 'text', text: 'A' }] },
    ];
    const history = historyOf(messages);
    expect(history).toEqual([
      { type: 'user', text: 'read both' },
      {
        type: 'model',
        response: [
          'Reading.',
          {
            type: 'functionCall',
            name: 'Read',
            params: { file_path: '/a' },
            result: 'A',
            startsNewChunk: true,
          },
          // Arguments that are not JSON are shown to the model as they were sent.
          { type: 'functionCall', name: 'Read', params: 'not json', result: 'B' },
        ],
      },
    ]);
    // The answer after the results is part of the same response; a later user turn starts a new one.
    const next = historyOf([
      ...messages,
      { role: 'assistant', content: 'A and B.' },
      { role: 'user', content: 'thanks' },
    ]);
    expect(next[1]).toMatchObject({
      type: 'model',
      response: ['Reading.', { name: 'Read' }, { name: 'Read' }, 'A and B.'],
    });
    expect(next.slice(2)).toEqual([
      { type: 'user', text: 'thanks' },
      { type: 'model', response: [] },
    ]);
  });

  it("refuses OpenAI's pairing errors: a call with no result, a result with no call, malformed calls", () => {
    const asked = { role: 'assistant' as const, content: null, tool_calls: [call('c1', 'Read', '{}')] };
    expect(refusal(() => historyOf([{ role: 'user', content: 'x' }, asked]))).toMatchObject({
      param: 'messages[1]',
    });
    expect(
      refusal(() => historyOf([{ role: 'user', content: 'x' }, asked, { role: 'user', content: 'y' }]))
        .message,
    ).toContain('c1');
    expect(
      refusal(() =>
        historyOf([
          { role: 'user', content: 'x' },
          { role: 'tool', tool_call_id: 'c9', content: 'r' },
        ]),
      ),
    ).toMatchObject({ param: 'messages[1].tool_call_id' });
    expect(
      refusal(() =>
        historyOf([
          asked,
          { role: 'tool', tool_call_id: 'c1', content: 'r' },
          { role: 'tool', tool_call_id: 'c1', content: 'again' },
        ]),
      ),
    ).toMatchObject({ param: 'messages[2].tool_call_id' });
    expect(
      refusal(() =>
        historyOf([
          {
            role: 'assistant',
            content: null,
            tool_calls: [call('c1', 'Read', '{}'), call('c1', 'Read', '{}')],
          },
        ]),
      ),
    ).toMatchObject({ param: 'messages[0].tool_calls[1].id' });
    expect(
      refusal(() =>
        historyOf([
          {
            role: 'assistant',
            content: null,
            tool_calls: [{ id: 'c1', type: 'function', function: { name: 'Read', arguments: {} } }],
          },
        ]),
      ),
    ).toMatchObject({
      param: 'messages[0].tool_calls[0].function.arguments',
    });
  });
});

describe('local reply: worker events -> OpenAI chat completion', () => {
  async function chunksOf(body: LocalAnswer): Promise<any[]> {
    const steps = [];
    for await (const batch of body.steps()) steps.push(...batch);
    // Only the last step ends the stream.
    expect(steps.map((step) => step.done === true)).toEqual(steps.map((_, i) => i === steps.length - 1));
    return steps.flatMap((step) => step.chunks);
  }

  it('streams tool calls as OpenAI does: id, type and name first, then argument deltas, then finish_reason tool_calls', async () => {
    const body = new LocalAnswer();
    const reply = new LocalReply(body, true, 'smollm2');
    reply.onCallStart(0, 'Read');
    reply.onCallArguments(0, '{"file_path": ');
    reply.onCallArguments(0, '"/a"}');
    reply.finish('tool_calls', usageOf(10, 5, 0));
    const chunks = await chunksOf(body);
    const deltas = chunks.filter((c) => c.choices.length).map((c) => c.choices[0].delta);
    expect(deltas[0]).toEqual({ role: 'assistant', content: '' });
    expect(deltas[1]).toEqual({
      tool_calls: [
        {
          index: 0,
          id: expect.stringMatching(/^call_[A-Za-z0-9]{24}$/),
          type: 'function',
          function: { name: 'Read', arguments: '' },
        },
      ],
    });
    expect(deltas.slice(2, 4)).toEqual([
      { tool_calls: [{ index: 0, function: { arguments: '{"file_path": ' } }] },
      { tool_calls: [{ index: 0, function: { arguments: '"/a"}' } }] },
    ]);
    expect(chunks.find((c) => c.choices[0]?.finish_reason).choices[0].finish_reason).toBe('tool_calls');
    expect(chunks.at(-1).usage).toEqual({ prompt_tokens: 10, completion_tokens: 5, total_tokens: 15 });
    expect(new Set(chunks.map((c) => c.id))).toEqual(new Set([reply.id]));
  });

  it('answers whole: content null beside tool calls, text kept when the model wrote some first', async () => {
    const body = new LocalAnswer();
    const reply = new LocalReply(body, false, 'smollm2');
    reply.onCallStart(0, 'Read');
    reply.onCallArguments(0, '{}');
    reply.onCallStart(1, 'Bash');
    reply.onCallArguments(1, '{"command":"ls"}');
    reply.finish('tool_calls', usageOf(10, 8, 0));
    const completion = (await body.json()) as any;
    expect(completion.choices[0]).toEqual({
      index: 0,
      message: {
        role: 'assistant',
        content: null,
        refusal: null,
        tool_calls: [
          {
            id: expect.stringMatching(/^call_/),
            type: 'function',
            function: { name: 'Read', arguments: '{}' },
          },
          {
            id: expect.stringMatching(/^call_/),
            type: 'function',
            function: { name: 'Bash', arguments: '{"command":"ls"}' },
          },
        ],
      },
      finish_reason: 'tool_calls',
      logprobs: null,
    });
    const ids = completion.choices[0].message.tool_calls.map((call: { id: string }) => call.id);
    expect(new Set(ids).size).toBe(2);
    const withText = new LocalAnswer();
    const textFirst = new LocalReply(withText, false, 'smollm2');
    textFirst.onText('Let me look.');
    textFirst.onCallStart(0, 'Read');
    textFirst.finish('tool_calls', usageOf(1, 1, 0));
    expect(((await withText.json()) as any).choices[0].message).toMatchObject({
      content: 'Let me look.',
      tool_calls: [{ function: { name: 'Read', arguments: '' } }],
    });
  });
});
