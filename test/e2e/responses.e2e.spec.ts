import OpenAI from 'openai';
import { eventually } from '../support/eventually';
import { OpenAIUpstream, REASONING } from '../support/openai-upstream';
import { words } from '../support/standin-server';
import { startTestGateway, type TestGateway } from '../support/test-gateway';
import { waitForUsageRecord, waitForUsageRecords } from '../support/usage';

/** POST /v1/responses and the stored responses, with the official openai SDK, translated to chat backends. */
describe('OpenAI Responses API', () => {
  let openai: OpenAIUpstream;
  let gw: TestGateway;
  let client: OpenAI;
  const weather = [
    {
      type: 'function' as const,
      name: 'get_weather',
      description: 'Weather for a city',
      parameters: { type: 'object', properties: { query: { type: 'string' } }, required: ['query'] },
      strict: false,
    },
  ];

  beforeAll(async () => {
    openai = await new OpenAIUpstream().start();
    gw = await startTestGateway({
      upstreamUrl: openai.url,
      config: {
        backends: {
          'openai-responses': {
            type: 'openai',
            baseUrl: openai.url,
            apiKey: '${TEST_UPSTREAM_KEY}',
            responsesApi: true,
          },
        },
        models: {
          'native-echo': { backend: 'openai-responses', upstreamModel: 'echo' },
          'native-tools': { backend: 'openai-responses', upstreamModel: 'tool-caller' },
          'native-reasoner': {
            backend: 'openai-responses',
            upstreamModel: 'reasoner',
            thinking: 'reasoning_effort',
          },
          'native-then-chat': {
            deployments: [
              { backend: 'openai-responses', upstreamModel: 'status-500' },
              { backend: 'standin', upstreamModel: 'echo', priority: 1 },
            ],
          },
          'gpt-tools': { backend: 'standin', upstreamModel: 'tool-caller' },
          'gpt-reasoner': { backend: 'standin', upstreamModel: 'reasoner', thinking: 'reasoning_effort' },
        },
      },
    });
    client = gw.openai((await gw.teamToken('responders')).token);
  });
  afterAll(async () => {
    await gw.close();
    await openai.stop();
  });

  it('answers a Response (instructions and input as chat messages), stores it, and lists its input items', async () => {
    const response = await client.responses.create({
      model: 'echo',
      instructions: 'Be brief.',
      input: 'hello there',
      max_output_tokens: 50,
      temperature: 0.5,
    });
    expect(response).toMatchObject({
      object: 'response',
      status: 'completed',
      model: 'echo',
      instructions: 'Be brief.',
      store: true,
      error: null,
      incomplete_details: null,
    });
    expect(response.id).toMatch(/^resp_/);
    expect(response.output_text).toBe('echo: hello there');
    expect(response.output).toEqual([
      {
        id: expect.stringMatching(/^msg_/),
        type: 'message',
        status: 'completed',
        role: 'assistant',
        content: [{ type: 'output_text', text: 'echo: hello there', annotations: [], logprobs: [] }],
      },
    ]);
    // The stand-in's words: "Be brief." and "hello there" in, "echo: hello there" out.
    expect(response.usage).toMatchObject({
      input_tokens: 4,
      output_tokens: 3,
      output_tokens_details: { reasoning_tokens: 0 },
      total_tokens: 7,
    });
    expect(openai.last().body).toMatchObject({
      model: 'echo',
      messages: [
        { role: 'system', content: 'Be brief.' },
        { role: 'user', content: 'hello there' },
      ],
      max_completion_tokens: 50,
      temperature: 0.5,
    });

    const again = await client.responses.retrieve(response.id);
    expect(again).toEqual(response);
    const items = await client.responses.inputItems.list(response.id);
    // A string input comes back as OpenAI returns items: a message whose content is a list of input_text parts.
    expect(items.data).toEqual([
      {
        id: expect.stringMatching(/^msg_/),
        type: 'message',
        role: 'user',
        status: 'completed',
        content: [{ type: 'input_text', text: 'hello there' }],
      },
    ]);
    expect(
      items.data.flatMap((item) => (item.type === 'message' ? item.content.map((part) => part.type) : [])),
    ).toEqual(['input_text']);
  });

  it("input_items gives every item in OpenAI's ItemResource form: parts lists, statuses, assistant turns as output messages; pages end with ids", async () => {
    const first = await client.responses.create({ model: 'gpt-tools', input: 'Oslo', tools: weather });
    const second = await client.responses.create({
      model: 'gpt-tools',
      previous_response_id: first.id,
      tools: weather,
      input: [
        { type: 'function_call_output', call_id: 'call_abc123', output: 'rainy' },
        { role: 'assistant', content: 'Noted.' },
        {
          role: 'user',
          content: [
            { type: 'input_text', text: 'and' },
            { type: 'input_image', image_url: 'data:image/png;base64,iVBORw0KGgo=' },
          ],
        },
        { type: 'function_call', call_id: 'call_2', name: 'get_weather', arguments: '{}' },
        { type: 'function_call_output', call_id: 'call_2', output: [{ type: 'input_text', text: 'dry' }] },
      ],
    } as any);
    const { data } = await client.responses.inputItems.list(second.id, { order: 'asc' });
    expect(data.map(({ id: _id, ...item }) => item)).toEqual([
      { type: 'function_call_output', call_id: 'call_abc123', output: 'rainy', status: 'completed' },
      {
        type: 'message',
        role: 'assistant',
        status: 'completed',
        content: [{ type: 'output_text', text: 'Noted.', annotations: [], logprobs: [] }],
      },
      {
        type: 'message',
        role: 'user',
        status: 'completed',
        content: [
          { type: 'input_text', text: 'and' },
          { type: 'input_image', image_url: 'data:image/png;base64,iVBORw0KGgo=', detail: 'auto' },
        ],
      },
      { type: 'function_call', call_id: 'call_2', name: 'get_weather', arguments: '{}', status: 'completed' },
      {
        type: 'function_call_output',
        call_id: 'call_2',
        output: [{ type: 'input_text', text: 'dry' }],
        status: 'completed',
      },
    ]);
    // A page past the end: no items, and first_id/last_id still strings (ResponseItemList requires them).
    const last = data.at(-1)!.id!;
    const past = await gw.asTeam(
      (await gw.teamToken('responders')).token,
      'GET',
      `/v1/responses/${second.id}/input_items?order=asc&after=${last}`,
    );
    expect(past.body).toEqual({ object: 'list', data: [], first_id: '', last_id: '', has_more: false });
  });

  it('usage has both cache details, function tools are echoed with strict, the in-progress response has no usage', async () => {
    const loose = [
      { type: 'function' as const, name: 'get_weather', parameters: { type: 'object', properties: {} } },
    ];
    const response = await client.responses.create({
      model: 'echo',
      input: 'hi',
      tools: loose as any,
      user: undefined,
    });
    expect(response.usage!.input_tokens_details).toEqual({ cached_tokens: 0, cache_write_tokens: 0 });
    expect(response.tools).toEqual([
      { type: 'function', name: 'get_weather', parameters: { type: 'object', properties: {} }, strict: null },
    ]);
    expect(response).not.toHaveProperty('user');
    const events: any[] = [];
    const stream = client.responses.stream({ model: 'echo', input: 'hi', tools: weather });
    stream.on('event', (event) => events.push(event));
    const final = await stream.finalResponse();
    expect(events[0].response).not.toHaveProperty('usage');
    expect(final.tools).toEqual([{ ...weather[0], strict: false }]);
    expect(final.usage!.input_tokens_details).toEqual({ cached_tokens: 0, cache_write_tokens: 0 });
    const parts = events
      .filter((e) => e.type === 'response.content_part.added' || e.type === 'response.content_part.done')
      .map((e) => e.part);
    expect(parts).toEqual([
      { type: 'output_text', text: '', annotations: [], logprobs: [] },
      { type: 'output_text', text: 'echo: hi', annotations: [], logprobs: [] },
    ]);
  });

  it('streams the semantic events with sequence numbers, ending in response.completed with the whole output', async () => {
    const stream = client.responses.stream({ model: 'echo', input: 'one two three' });
    const types: string[] = [];
    const sequence: number[] = [];
    for await (const event of stream) {
      types.push(event.type);
      sequence.push(event.sequence_number);
    }
    const final = await stream.finalResponse();
    expect(final.output_text).toBe('echo: one two three');
    expect(sequence).toEqual(sequence.map((_, i) => i));
    expect(types.slice(0, 4)).toEqual([
      'response.created',
      'response.in_progress',
      'response.output_item.added',
      'response.content_part.added',
    ]);
    expect(types.filter((t) => t === 'response.output_text.delta').length).toBeGreaterThan(1);
    expect(types.slice(-4)).toEqual([
      'response.output_text.done',
      'response.content_part.done',
      'response.output_item.done',
      'response.completed',
    ]);
    expect(final.usage).toMatchObject({ input_tokens: 3, output_tokens: 4, total_tokens: 7 });
    // Stored before response.completed went out.
    expect((await client.responses.retrieve(final.id)).output_text).toBe('echo: one two three');
  });

  it('a function call round trip with previous_response_id: the call, then its output continues the stored conversation', async () => {
    const first = await client.responses.create({
      model: 'gpt-tools',
      input: 'Oslo',
      tools: weather,
      tool_choice: 'required',
      parallel_tool_calls: false,
    });
    const call = first.output.find((item) => item.type === 'function_call')!;
    expect(call).toMatchObject({
      type: 'function_call',
      status: 'completed',
      call_id: 'call_abc123',
      name: 'get_weather',
      arguments: '{"query":"Oslo"}',
    });
    expect(openai.last().body).toMatchObject({
      tool_choice: 'required',
      parallel_tool_calls: false,
      tools: [
        {
          type: 'function',
          function: { name: 'get_weather', parameters: weather[0].parameters, strict: false },
        },
      ],
    });

    const second = await client.responses.create({
      model: 'gpt-tools',
      previous_response_id: first.id,
      input: [{ type: 'function_call_output', call_id: 'call_abc123', output: 'rainy' }],
      tools: weather,
    });
    expect(second.output_text).toBe('tool said: rainy');
    expect(second.previous_response_id).toBe(first.id);
    expect(openai.last().body.messages).toEqual([
      { role: 'user', content: 'Oslo' },
      {
        role: 'assistant',
        content: null,
        tool_calls: [
          {
            id: 'call_abc123',
            type: 'function',
            function: { name: 'get_weather', arguments: '{"query":"Oslo"}' },
          },
        ],
      },
      { role: 'tool', tool_call_id: 'call_abc123', content: 'rainy' },
    ]);
  });

  it('streams a function call as a function_call item with argument deltas', async () => {
    const stream = client.responses.stream({ model: 'gpt-tools', input: 'Lima', tools: weather });
    const types: string[] = [];
    stream.on('event', (event) => types.push(event.type));
    const final = await stream.finalResponse();
    expect(final.output).toEqual([
      expect.objectContaining({
        type: 'function_call',
        call_id: 'call_abc123',
        name: 'get_weather',
        arguments: '{"query":"Lima"}',
        status: 'completed',
      }),
    ]);
    expect(types).toContain('response.function_call_arguments.delta');
    expect(types).toContain('response.function_call_arguments.done');
  });

  it('maps reasoning.effort to the family option and returns reasoning as a reasoning item with a summary', async () => {
    const response = await client.responses.create({
      model: 'gpt-reasoner',
      input: 'ponder',
      reasoning: { effort: 'high', summary: 'auto' },
    });
    expect(openai.last().body.reasoning_effort).toBe('high');
    expect(response.output[0]).toMatchObject({
      type: 'reasoning',
      summary: [{ type: 'summary_text', text: 'Thinking it over.' }],
    });
    expect(response.output_text).toBe('echo: ponder');
    expect(response.reasoning).toEqual({ effort: 'high', summary: 'auto' });

    const streamed = await client.responses
      .stream({ model: 'gpt-reasoner', input: 'ponder more', reasoning: { effort: 'low' } })
      .finalResponse();
    expect(streamed.output.map((item) => item.type)).toEqual(['reasoning', 'message']);
    // Codex sends reasoning to every model: dropped, not refused, where a model cannot think.
    const plain = await client.responses.create({ model: 'echo', input: 'x', reasoning: { effort: 'high' } });
    expect(plain.status).toBe('completed');
    expect(openai.last().body.reasoning_effort).toBeUndefined();
  });

  it('text.format becomes response_format; a length cut is an incomplete response; a failure mid-stream is response.failed then an error the SDK raises', async () => {
    const schema = {
      type: 'object',
      properties: { city: { type: 'string' } },
      required: ['city'],
      additionalProperties: false,
    };
    await client.responses.create({
      model: 'echo',
      input: 'json please',
      text: { format: { type: 'json_schema', name: 'place', schema, strict: true } },
    });
    expect(openai.last().body.response_format).toEqual({
      type: 'json_schema',
      json_schema: { name: 'place', schema, strict: true },
    });

    const cut = await client.responses.create({
      model: 'echo',
      input: Array.from({ length: 30 }, (_, i) => `w${i}`).join(' '),
      max_output_tokens: 16,
    });
    expect(cut).toMatchObject({ status: 'incomplete', incomplete_details: { reason: 'max_output_tokens' } });

    const { token } = await gw.teamToken('responses-midstream');
    const stream = gw
      .openai(token)
      .responses.stream({ model: 'midstream-error', input: 'one two three four' });
    const types: string[] = [];
    stream.on('event', (event) => types.push(event.type));
    const failed: any[] = [];
    stream.on('event', (event) => event.type === 'response.failed' && failed.push(event.response));
    const failure = await stream.finalResponse().catch((e: unknown) => e);
    expect(failure).toBeInstanceOf(OpenAI.APIError);
    expect(types).toContain('response.output_text.delta');
    expect(types).toContain('response.failed');
    // response.error.code is one of OpenAI's ResponseErrorCode values; the gateway's own code stays in the message.
    expect(failed[0].error).toEqual({
      code: 'server_error',
      message: expect.stringMatching(/\[upstream_error\]$/),
    });
    const record = await waitForUsageRecord(gw, 'responses-midstream');
    expect(record).toMatchObject({ endpoint: 'responses', outcome: 'error' });
  });

  it('store: false keeps nothing; another team gets 404 for our responses and cannot continue them', async () => {
    const unstored = await client.responses.create({ model: 'echo', input: 'secret', store: false });
    expect((unstored as unknown as { store: boolean }).store).toBe(false);
    await expect(client.responses.retrieve(unstored.id)).rejects.toBeInstanceOf(OpenAI.NotFoundError);

    const mine = await client.responses.create({ model: 'echo', input: 'private' });
    const other = gw.openai((await gw.teamToken('other-team')).token);
    await expect(other.responses.retrieve(mine.id)).rejects.toBeInstanceOf(OpenAI.NotFoundError);
    await expect(other.responses.inputItems.list(mine.id)).rejects.toBeInstanceOf(OpenAI.NotFoundError);
    const continued = (await other.responses
      .create({ model: 'echo', input: 'more', previous_response_id: mine.id })
      .catch((e: unknown) => e)) as InstanceType<typeof OpenAI.APIError>;
    expect(continued).toBeInstanceOf(OpenAI.NotFoundError);
    expect(continued.code).toBe('previous_response_not_found');
    await expect(other.responses.delete(mine.id)).rejects.toBeInstanceOf(OpenAI.NotFoundError);

    await client.responses.delete(mine.id);
    await expect(client.responses.retrieve(mine.id)).rejects.toBeInstanceOf(OpenAI.NotFoundError);
  });

  it('expired responses are gone (the TTL of responses.storeTtlSeconds)', async () => {
    const response = await client.responses.create({ model: 'echo', input: 'short-lived' });
    const key = (await gw.redis.keys(`${gw.prefix}resp:*:${response.id}`))[0];
    expect(await gw.redis.ttl(key)).toBeGreaterThan(29 * 86_400);
    await gw.redis.pexpire(key, 1);
    await eventually(async () => expect(await gw.redis.exists(key)).toBe(0));
    await expect(client.responses.retrieve(response.id)).rejects.toBeInstanceOf(OpenAI.NotFoundError);
  });

  it('is accounted as endpoint responses; bad input is a 400 naming it', async () => {
    const { token } = await gw.teamToken('responses-usage');
    await gw.openai(token).responses.create({ model: 'echo', input: 'count me' });
    const record = await waitForUsageRecord(gw, 'responses-usage');
    expect(record).toMatchObject({
      endpoint: 'responses',
      model: 'echo',
      outcome: 'ok',
      estimated: false,
      prompt_tokens: 2,
      completion_tokens: 3,
    });
    for (const body of [
      { model: 'echo' },
      { model: 'echo', input: [{ type: 'computer_call', id: 'x' }] },
      { model: 'echo', input: [{ role: 'robot', content: 'x' }] },
      { model: 'echo', input: [{ type: 'function_call_output', call_id: 'call_nope', output: 'x' }] },
      { model: 'echo', input: 'x', max_output_tokens: 5 },
    ]) {
      const response = await gw.asTeam(token, 'POST', '/v1/responses', body);
      expect(response.status).toBe(400);
      expect(response.body.error).toMatchObject({
        type: 'invalid_request_error',
        param: expect.stringMatching(/^(input|max_output_tokens)/),
      });
    }
  });

  describe('to a Responses-capable backend (native)', () => {
    it("passes the request through (hosted tools kept) and answers with the backend's response, stored by the gateway", async () => {
      const tools = [...weather, { type: 'web_search' as const }];
      const response = await client.responses.create({
        model: 'native-echo',
        input: 'hi native',
        tools,
        metadata: { team: 'x' },
      });
      expect(response.output_text).toBe('echo: hi native');
      expect(response.model).toBe('native-echo');
      const sent = openai.last();
      expect(sent.path).toBe('/v1/responses');
      expect(sent.body).toMatchObject({
        model: 'echo',
        input: 'hi native',
        tools: JSON.parse(JSON.stringify(tools)),
        metadata: { team: 'x' },
        store: false,
        include: ['reasoning.encrypted_content'],
      });
      expect(sent.headers.authorization).toBe('Bearer upstream-secret-key');
      expect((await client.responses.retrieve(response.id)).output_text).toBe('echo: hi native');
    });

    it("streams the backend's events unchanged but for the model, and continues a function call with previous_response_id", async () => {
      const stream = client.responses.stream({ model: 'native-tools', input: 'Quito', tools: weather });
      const sequence: number[] = [];
      stream.on('event', (event) => sequence.push(event.sequence_number));
      const first = await stream.finalResponse();
      expect(sequence).toEqual(sequence.map((_, i) => i));
      expect(first.model).toBe('native-tools');
      const call = first.output.find((item) => item.type === 'function_call')!;
      expect(call).toMatchObject({
        call_id: 'call_resp123',
        name: 'get_weather',
        arguments: '{"query":"Quito"}',
      });

      const second = await client.responses.create({
        model: 'native-tools',
        previous_response_id: first.id,
        input: [{ type: 'function_call_output', call_id: 'call_resp123', output: 'windy' }],
        tools: weather,
      });
      expect(second.output_text).toBe('tool said: windy');
      // The gateway keeps the state: the backend gets the whole conversation, never a previous_response_id.
      expect(openai.last().body.previous_response_id).toBeUndefined();
      expect(openai.last().body.input.map((item: { type?: string }) => item.type ?? 'message')).toEqual([
        'message',
        'function_call',
        'function_call_output',
      ]);
    });

    it('replays encrypted reasoning to the backend, and accounts the native usage as responses', async () => {
      const { token } = await gw.teamToken('native-usage');
      const own = gw.openai(token);
      const first = await own.responses.create({
        model: 'native-reasoner',
        input: 'think',
        reasoning: { effort: 'high' },
      });
      expect(first.output[0]).toMatchObject({
        type: 'reasoning',
        encrypted_content: 'enc-standin-reasoning',
      });
      expect(openai.last().body.reasoning).toEqual({ effort: 'high' });
      const next = await own.responses.create({
        model: 'native-reasoner',
        input: 'again',
        previous_response_id: first.id,
      });
      expect(next.status).toBe('completed');
      expect(openai.last().body.input[1]).toMatchObject({
        type: 'reasoning',
        encrypted_content: 'enc-standin-reasoning',
      });
      const records = await waitForUsageRecords(gw, 'native-usage', 2);
      expect(records[1]).toMatchObject({
        endpoint: 'responses',
        model: 'native-reasoner',
        // The Responses stand-in's words: "think" in; its reasoning summary and "echo: think" out.
        prompt_tokens: 1,
        completion_tokens: words(REASONING) + words('echo: think'),
        reasoning_tokens: 3,
        estimated: false,
      });
    });

    it('falls back from a failing native deployment to a chat one within one request; a translated conversation continues natively', async () => {
      const { data, response } = await client.responses
        .create({ model: 'native-then-chat', input: 'anyone' })
        .withResponse();
      expect(data.output_text).toBe('echo: anyone');
      expect(response.headers.get('x-switchyard-attempts')).toBe('2');
      const translated = await client.responses.create({
        model: 'gpt-reasoner',
        input: 'ponder',
        reasoning: { effort: 'low' },
      });
      const native = await client.responses.create({
        model: 'native-echo',
        input: 'and now?',
        previous_response_id: translated.id,
      });
      expect(native.output_text).toBe('echo: and now?');
      // The chat backend's reasoning (no encrypted_content) is not sent to the Responses backend.
      expect(openai.last().body.input.map((item: { type?: string; role?: string }) => item.type)).toEqual([
        'message',
        'message',
        'message',
      ]);
    });
  });
});
