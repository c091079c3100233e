import Anthropic from '@anthropic-ai/sdk';
import { ensureLocalModel, localBackend, referenceTokens } from '../support/local-model';
import { OpenAIUpstream } from '../support/openai-upstream';
import { startTestGateway, type TestGateway } from '../support/test-gateway';
import { waitForUsageSummary } from '../support/usage';

/**
 * Tool calling on the real default model (SmolLM2-135M-Instruct) through node-llama-cpp's function calling: forced
 * calls are grammar-constrained (valid JSON of the tool's schema, one of the offered names), results go back to the
 * model, and the answers are OpenAI's tool_calls (whole and as stream deltas) and, translated, Anthropic's tool_use.
 */
describe('local model tool calling (real model)', () => {
  jest.setTimeout(180_000);
  let upstream: OpenAIUpstream;
  let gw: TestGateway;
  let client: ReturnType<TestGateway['openai']>;
  let token: string;

  const weather = {
    type: 'function' as const,
    function: {
      name: 'get_weather',
      description: 'Get the current weather in a city',
      parameters: {
        type: 'object',
        properties: {
          city: { type: 'string', description: 'The city' },
          unit: { type: 'string', enum: ['celsius', 'fahrenheit'] },
          days: { type: 'integer', minimum: 1 },
        },
        required: ['city', 'unit'],
        additionalProperties: false,
      },
    },
  };
  const readFile = {
    type: 'function' as const,
    function: {
      name: 'read_file',
      description: 'Read a file',
      parameters: { type: 'object', properties: { path: { type: 'string' } }, required: ['path'] },
    },
  };
  const tools = [weather, readFile];
  const ask = (content: string) => [{ role: 'user' as const, content }];

  beforeAll(async () => {
    ensureLocalModel();
    upstream = await new OpenAIUpstream().start();
    gw = await startTestGateway({
      upstreamUrl: upstream.url,
      config: {
        backends: {
          local: localBackend({ contextSize: 2048 }),
          'local-first': localBackend({ contextSize: 2048, autoToolChoice: 'callFirst' }),
        },
        models: {
          smollm2: { backend: 'local', upstreamModel: 'SmolLM2-135M-Instruct' },
          'smollm2-agent': { backend: 'local-first', upstreamModel: 'SmolLM2-135M-Instruct' },
        },
      },
    });
    ({ token } = await gw.teamToken('local-tools'));
    client = gw.openai(token);
  });
  afterAll(async () => {
    await gw?.close();
    await upstream?.stop();
  });

  it('tool_choice required: a grammar-constrained call (an offered name, JSON arguments with every required key of the right type)', async () => {
    const completion = await client.chat.completions.create({
      model: 'smollm2',
      messages: ask('What is the weather in Paris?'),
      tools,
      tool_choice: 'required',
      temperature: 0,
    });
    const choice = completion.choices[0];
    expect(choice.finish_reason).toBe('tool_calls');
    expect(choice.message.content).toBeNull();
    expect(choice.message.tool_calls).toHaveLength(1); // SmolLM2's ChatML template has no parallel calls
    const call = choice.message.tool_calls![0] as {
      id: string;
      type: string;
      function: { name: string; arguments: string };
    };
    expect(call).toMatchObject({ id: expect.stringMatching(/^call_[A-Za-z0-9]{24}$/), type: 'function' });
    expect(['get_weather', 'read_file']).toContain(call.function.name);
    const args = JSON.parse(call.function.arguments);
    if (call.function.name === 'get_weather') {
      expect(Object.keys(args).sort()).toEqual(['city', 'unit']);
      expect(typeof args.city).toBe('string');
      expect(['celsius', 'fahrenheit']).toContain(args.unit);
    } else expect(Object.keys(args)).toEqual(['path']);
    // The call is output: counted in completion_tokens; the prompt documents the tools as node-llama-cpp renders them.
    expect(completion.usage!.completion_tokens).toBeGreaterThan(5);
    const functions = {
      get_weather: {
        description: 'Get the current weather in a city',
        params: {
          type: 'object',
          properties: {
            city: { type: 'string', description: 'The city' },
            unit: { enum: ['celsius', 'fahrenheit'] },
          },
        },
      },
      read_file: {
        description: 'Read a file',
        params: { type: 'object', properties: { path: { type: 'string' } } },
      },
    };
    const reference = await referenceTokens(
      [
        { type: 'user', text: 'What is the weather in Paris?' },
        { type: 'model', response: [] },
      ],
      '',
      functions,
    );
    expect(completion.usage!.prompt_tokens).toBe(reference.prompt);
  });

  it('a named function is the call made; streamed, the SDK assembles the same call from tool-call deltas', async () => {
    const named = { type: 'function' as const, function: { name: 'read_file' } };
    const stream = await client.chat.completions.create({
      model: 'smollm2',
      messages: ask('Show me notes.txt'),
      tools,
      tool_choice: named,
      stream: true,
      stream_options: { include_usage: true },
    });
    const chunks: any[] = [];
    for await (const chunk of stream) chunks.push(chunk);
    const deltas = chunks.flatMap((c) => c.choices[0]?.delta?.tool_calls ?? []);
    expect(deltas[0]).toMatchObject({
      index: 0,
      id: expect.stringMatching(/^call_/),
      type: 'function',
      function: { name: 'read_file', arguments: '' },
    });
    expect(deltas.length).toBeGreaterThan(2); // the arguments arrive as they are generated
    const args = JSON.parse(deltas.map((d) => d.function?.arguments ?? '').join(''));
    expect(Object.keys(args)).toEqual(['path']);
    expect(chunks.find((c) => c.choices[0]?.finish_reason)?.choices[0].finish_reason).toBe('tool_calls');
    expect(chunks.at(-1).usage.completion_tokens).toBeGreaterThan(3);
    // The SDK's own stream helper builds the final message from the deltas.
    const runner = client.chat.completions.stream({
      model: 'smollm2',
      messages: ask('Show me notes.txt'),
      tools,
      tool_choice: named,
    });
    const final = await runner.finalChatCompletion();
    expect(final.choices[0].message.tool_calls![0].function.name).toBe('read_file');
    expect(JSON.parse(final.choices[0].message.tool_calls![0].function.arguments)).toHaveProperty('path');
  });

  it('none offers no tools (the prompt is the plain one); auto leaves the choice to the model, with the tools in the prompt', async () => {
    const plain = await client.chat.completions.create({
      model: 'smollm2',
      messages: ask('Say hi.'),
      max_tokens: 8,
      temperature: 0,
    });
    const none = await client.chat.completions.create({
      model: 'smollm2',
      messages: ask('Say hi.'),
      max_tokens: 8,
      temperature: 0,
      tools,
      tool_choice: 'none',
    });
    expect(none.usage!.prompt_tokens).toBe(plain.usage!.prompt_tokens);
    expect(none.choices[0].message.tool_calls).toBeUndefined();
    const auto = await client.chat.completions.create({
      model: 'smollm2',
      messages: ask('Say hi.'),
      max_tokens: 8,
      temperature: 0,
      tools,
    });
    expect(auto.usage!.prompt_tokens).toBeGreaterThan(plain.usage!.prompt_tokens + 50);
    expect(['stop', 'length', 'tool_calls']).toContain(auto.choices[0].finish_reason);
  });

  it('a tool result goes back to the model, which answers (callFirst: a call first, then an answer)', async () => {
    const messages: any[] = ask('What is the weather in Paris?');
    const first = await client.chat.completions.create({
      model: 'smollm2-agent',
      messages,
      tools: [weather],
      temperature: 0,
    });
    expect(first.choices[0].finish_reason).toBe('tool_calls');
    const call = first.choices[0].message.tool_calls![0] as {
      id: string;
      function: { name: string; arguments: string };
    };
    expect(call.function.name).toBe('get_weather');
    messages.push(first.choices[0].message, {
      role: 'tool',
      tool_call_id: call.id,
      content: 'Sunny, 24 degrees',
    });
    const second = await client.chat.completions.create({
      model: 'smollm2-agent',
      messages,
      tools: [weather],
      temperature: 0,
      max_tokens: 40,
    });
    expect(['stop', 'length']).toContain(second.choices[0].finish_reason);
    expect(second.choices[0].message.content!.length).toBeGreaterThan(0);
    // The prompt is the conversation with the call and its result, rendered as node-llama-cpp does.
    const history = [
      { type: 'user', text: 'What is the weather in Paris?' },
      {
        type: 'model',
        response: [
          {
            type: 'functionCall',
            name: 'get_weather',
            params: JSON.parse(call.function.arguments),
            result: 'Sunny, 24 degrees',
            startsNewChunk: true,
          },
        ],
      },
    ];
    const functions = {
      get_weather: {
        description: 'Get the current weather in a city',
        params: {
          type: 'object',
          properties: {
            city: { type: 'string', description: 'The city' },
            unit: { enum: ['celsius', 'fahrenheit'] },
          },
        },
      },
    };
    expect(second.usage!.prompt_tokens).toBe((await referenceTokens(history, '', functions)).prompt);
  });

  it("an agent's next turn resends the conversation: the sequence still holds it, so only the new part is evaluated (cached_tokens)", async () => {
    const system = `You are a weather assistant. ${'Answer with the weather only, in one short sentence, and never invent a city. '.repeat(60)}`;
    const messages: any[] = [{ role: 'system', content: system }, ...ask('Weather in Lima?')];
    const first = await client.chat.completions.create({
      model: 'smollm2',
      messages,
      tools: [weather],
      tool_choice: 'required',
      temperature: 0,
    });
    const call = first.choices[0].message.tool_calls![0];
    messages.push(first.choices[0].message, {
      role: 'tool',
      tool_call_id: call.id,
      content: 'Cloudy, 18 degrees',
    });
    const second = await client.chat.completions.create({
      model: 'smollm2',
      messages,
      tools: [weather],
      temperature: 0,
      max_tokens: 20,
    });
    expect(first.usage!.prompt_tokens).toBeGreaterThan(1000);
    // The first turn's prompt (the earlier tests' prompts share only their first few tokens with it).
    expect(first.usage!.prompt_tokens_details?.cached_tokens ?? 0).toBeLessThan(20);
    // The second turn's prompt starts with all of the first's.
    expect(second.usage!.prompt_tokens_details!.cached_tokens).toBeGreaterThanOrEqual(
      first.usage!.prompt_tokens,
    );
    expect(second.usage!.prompt_tokens_details!.cached_tokens).toBeLessThan(second.usage!.prompt_tokens);
  });

  it('refuses what OpenAI refuses: a result with no call, a call with no result, an unknown named function', async () => {
    const orphan = await gw.asTeam(token, 'POST', '/v1/chat/completions', {
      model: 'smollm2',
      messages: [...ask('x'), { role: 'tool', tool_call_id: 'nope', content: 'r' }],
      tools,
    });
    expect(orphan.status).toBe(400);
    expect(orphan.body.error).toMatchObject({
      type: 'invalid_request_error',
      param: 'messages[1].tool_call_id',
    });
    const unanswered = await gw.asTeam(token, 'POST', '/v1/chat/completions', {
      model: 'smollm2',
      messages: [
        ...ask('x'),
        {
          role: 'assistant',
          content: null,
          tool_calls: [{ id: 'c1', type: 'function', function: { name: 'read_file', arguments: '{}' } }],
        },
        { role: 'user', content: 'y' },
      ],
      tools,
    });
    expect(unanswered.status).toBe(400);
    expect(unanswered.body.error.message).toContain('c1');
    const unknown = await gw.asTeam(token, 'POST', '/v1/chat/completions', {
      model: 'smollm2',
      messages: ask('x'),
      tools,
      tool_choice: { type: 'function', function: { name: 'delete_all' } },
    });
    expect(unknown.status).toBe(400);
    expect(unknown.body.error).toMatchObject({ param: 'tool_choice.function.name' });
  });

  it('through the Messages API: tool_choice any is a tool_use block with a valid input, and the tool_result goes back', async () => {
    const anthropic = new Anthropic({ apiKey: token, baseURL: gw.url, maxRetries: 0 });
    const tool = {
      name: 'get_weather',
      description: 'Get the current weather in a city',
      input_schema: weather.function.parameters as Anthropic.Tool.InputSchema,
    };
    const first = await anthropic.messages.create({
      model: 'smollm2',
      max_tokens: 64,
      messages: [{ role: 'user', content: 'Weather in Oslo?' }],
      tools: [tool],
      tool_choice: { type: 'any' },
    });
    expect(first.stop_reason).toBe('tool_use');
    const use = first.content.find((block) => block.type === 'tool_use') as Anthropic.ToolUseBlock;
    expect(use).toMatchObject({
      name: 'get_weather',
      input: { city: expect.any(String), unit: expect.stringMatching(/^(celsius|fahrenheit)$/) },
    });
    const stream = anthropic.messages.stream({
      model: 'smollm2',
      max_tokens: 30,
      tools: [tool],
      messages: [
        { role: 'user', content: 'Weather in Oslo?' },
        { role: 'assistant', content: first.content },
        { role: 'user', content: [{ type: 'tool_result', tool_use_id: use.id, content: 'Rain, 7 degrees' }] },
      ],
    });
    const final = await stream.finalMessage();
    expect(['end_turn', 'max_tokens', 'tool_use']).toContain(final.stop_reason);
    expect(final.usage.input_tokens).toBeGreaterThan(first.usage.input_tokens);
  });

  it('through the Responses API: a function_call item with valid arguments, and its function_call_output goes back', async () => {
    const fnTool = {
      type: 'function' as const,
      name: 'get_weather',
      description: 'Get the current weather in a city',
      parameters: weather.function.parameters,
      strict: false,
    };
    const first = await client.responses.create({
      model: 'smollm2',
      input: 'Weather in Rome?',
      tools: [fnTool],
      tool_choice: 'required',
      max_output_tokens: 64,
    });
    const call = first.output.find((item) => item.type === 'function_call') as {
      call_id: string;
      name: string;
      arguments: string;
    };
    expect(call).toMatchObject({ name: 'get_weather', call_id: expect.stringMatching(/^call_/) });
    expect(Object.keys(JSON.parse(call.arguments)).sort()).toEqual(['city', 'unit']);
    const stream = client.responses.stream({
      model: 'smollm2',
      tools: [fnTool],
      max_output_tokens: 30,
      input: [
        { role: 'user', content: 'Weather in Rome?' },
        { type: 'function_call', call_id: call.call_id, name: call.name, arguments: call.arguments },
        { type: 'function_call_output', call_id: call.call_id, output: 'Hot, 31 degrees' },
      ],
    });
    const final = await stream.finalResponse();
    expect(final.status).toMatch(/completed|incomplete/);
    expect(final.usage!.input_tokens).toBeGreaterThan(first.usage!.input_tokens);
  });

  it('accounts every tool request like any other', async () => {
    // Its own team and requests (a forced call, then its result going back), so the figures are exactly theirs.
    const mine = gw.openai((await gw.teamToken('local-tools-accounted')).token);
    const called = await mine.chat.completions.create({
      model: 'smollm2',
      messages: ask('What is the weather in Paris?'),
      tools,
      tool_choice: 'required',
      temperature: 0,
    });
    const call = called.choices[0].message.tool_calls![0] as { id: string; function: { name: string } };
    expect(called.choices[0].finish_reason).toBe('tool_calls');
    const answered = await mine.chat.completions.create({
      model: 'smollm2',
      messages: [
        ...ask('What is the weather in Paris?'),
        { role: 'assistant', content: null, tool_calls: called.choices[0].message.tool_calls },
        { role: 'tool', tool_call_id: call.id, content: 'Sunny, 21 degrees.' },
      ],
      tools,
      temperature: 0,
      max_tokens: 16,
    });
    const told = [called, answered].reduce(
      (sum, { usage }) => ({
        prompt_tokens: sum.prompt_tokens + usage!.prompt_tokens,
        completion_tokens: sum.completion_tokens + usage!.completion_tokens,
      }),
      { prompt_tokens: 0, completion_tokens: 0 },
    );
    const { total } = await waitForUsageSummary(gw, 'team=local-tools-accounted', 2);
    expect(total).toMatchObject({
      requests_ok: 2,
      ...told,
      total_tokens: told.prompt_tokens + told.completion_tokens,
    });
  });
});
