import Anthropic from '@anthropic-ai/sdk';
import { countTokens } from 'gpt-tokenizer'; // o200k_base, the gateway's tokenizer
import { AnthropicUpstream } from '../support/anthropic-upstream';
import { GeminiUpstream } from '../support/gemini-upstream';
import { OpenAIUpstream, REASONING } from '../support/openai-upstream';
import { words } from '../support/standin-server';
import { startTestGateway, type TestGateway } from '../support/test-gateway';
import { waitForOwnUsageSummary, waitForUsageRecord } from '../support/usage';

/**
 * POST /v1/messages and /v1/messages/count_tokens with the official @anthropic-ai/sdk: natively to an Anthropic
 * backend (the stand-in speaks Anthropic's documented wire format), translated to an OpenAI-compatible one.
 */
describe('Anthropic Messages API', () => {
  let anthropic: AnthropicUpstream;
  let openai: OpenAIUpstream;
  let gemini: GeminiUpstream;
  let gw: TestGateway;
  let token: string;
  let client: Anthropic;
  const weather = [
    {
      name: 'get_weather',
      description: 'Weather for a city',
      input_schema: {
        type: 'object' as const,
        properties: { query: { type: 'string' } },
        required: ['query'],
      },
    },
  ];

  beforeAll(async () => {
    [anthropic, openai, gemini] = await Promise.all([
      new AnthropicUpstream().start(),
      new OpenAIUpstream().start(),
      new GeminiUpstream().start(),
    ]);
    gw = await startTestGateway({
      upstreamUrl: openai.url,
      config: {
        backends: {
          claude: { type: 'anthropic', baseUrl: anthropic.url, apiKey: '${TEST_UPSTREAM_KEY}' },
          google: { type: 'gemini', baseUrl: gemini.url, apiKey: '${TEST_UPSTREAM_KEY}' },
        },
        models: {
          'claude-echo': { backend: 'claude', upstreamModel: 'claude-echo', thinking: 'native' },
          'claude-alias': { backend: 'claude', upstreamModel: 'claude-echo' },
          'claude-overloaded': { backend: 'claude', upstreamModel: 'claude-overloaded' },
          'claude-midstream': { backend: 'claude', upstreamModel: 'claude-midstream' },
          'gpt-tools': { backend: 'standin', upstreamModel: 'tool-caller' },
          'gpt-reasoner': { backend: 'standin', upstreamModel: 'reasoner', thinking: 'reasoning_effort' },
          'claude-or-gpt': {
            deployments: [
              { backend: 'claude', upstreamModel: 'claude-overloaded' },
              { backend: 'standin', upstreamModel: 'echo', priority: 1 },
            ],
          },
          embedder: { backend: 'standin', upstreamModel: 'text-embedding-3-small', kind: 'embedding' },
          gemini: {
            backend: 'google',
            upstreamModel: 'gemini-echo',
            thinking: 'native',
            thinkingBudget: { min: 0, max: 8192 },
          },
        },
      },
    });
    ({ token } = await gw.teamToken('messages'));
    client = new Anthropic({ apiKey: token, baseURL: gw.url, maxRetries: 0 });
  });
  afterAll(async () => {
    await gw.close();
    await Promise.all([anthropic.stop(), openai.stop(), gemini.stop()]);
  });

  describe('to an Anthropic backend (native)', () => {
    it('passes the request through byte for byte with the client headers and answers the upstream Message', async () => {
      // top_k and temperature left the SDK's types (deprecated on the newest models) but are still API fields.
      const message = await client.messages.create(
        {
          model: 'claude-echo',
          max_tokens: 64,
          system: 'Be brief.',
          messages: [{ role: 'user', content: 'hello there' }],
          top_k: 5,
          metadata: { user_id: 'u-1' },
        } as Anthropic.MessageCreateParamsNonStreaming,
        { headers: { 'anthropic-beta': 'interleaved-thinking-2025-05-14,context-management-2025-06-27' } },
      );
      expect(message).toMatchObject({
        type: 'message',
        role: 'assistant',
        model: 'claude-echo',
        stop_reason: 'end_turn',
        content: [{ type: 'text', text: 'echo: hello there' }],
      });
      expect(message.usage).toMatchObject({
        input_tokens: 4,
        output_tokens: 3,
        cache_read_input_tokens: 4,
        cache_creation_input_tokens: 2,
      });
      const sent = anthropic.last();
      expect(sent.headers).toMatchObject({
        'x-api-key': 'upstream-secret-key',
        'anthropic-beta': 'interleaved-thinking-2025-05-14,context-management-2025-06-27',
      });
      expect(sent.headers.authorization).toBeUndefined();
      expect(sent.body).toEqual({
        model: 'claude-echo',
        max_tokens: 64,
        system: 'Be brief.',
        messages: [{ role: 'user', content: 'hello there' }],
        top_k: 5,
        metadata: { user_id: 'u-1' },
      });
    });

    it("renames the model for the deployment and keeps Anthropic's newer fields (adaptive thinking, output_config, context_management)", async () => {
      const body = {
        model: 'claude-alias',
        max_tokens: 2048,
        thinking: { type: 'adaptive', display: 'summarized' },
        output_config: { effort: 'low' },
        context_management: { edits: [{ type: 'clear_thinking_20251015' }] },
        messages: [{ role: 'user', content: 'think' }],
      };
      const message = await client.messages.create(body as never);
      expect(message.model).toBe('claude-alias');
      expect(message.content.map((b) => b.type)).toEqual(['thinking', 'text']);
      expect(anthropic.last().body).toEqual({ ...body, model: 'claude-echo' });
    });

    it('sends a big body for a renamed model as the client wrote it, only the model written anew', async () => {
      // Escapes a serialiser would not write: they reach the backend only if the client's bytes were copied.
      const messages = `[ {"role": "user", "content": "${'caf\\u00e9 \\/ '.repeat(3000)}"} ]`;
      const response = await fetch(`${gw.url}/v1/messages`, {
        method: 'POST',
        headers: {
          'x-api-key': token,
          'anthropic-version': '2023-06-01',
          'content-type': 'application/json',
        },
        body: `{"model": "claude-alias", "max_tokens": 16, "messages": ${messages}}`,
      });
      expect(response.status).toBe(200);
      expect(((await response.json()) as { model: string }).model).toBe('claude-alias');
      expect(anthropic.last().text).toContain(`"messages": ${messages}`);
      expect(anthropic.last().body).toEqual({
        model: 'claude-echo',
        max_tokens: 16,
        messages: JSON.parse(messages),
      });
    });

    it('streams the upstream events unchanged except the model name, and accounts the usage', async () => {
      const { token: own } = await gw.teamToken('messages-native-stream');
      const stream = new Anthropic({ apiKey: own, baseURL: gw.url, maxRetries: 0 }).messages.stream({
        model: 'claude-echo',
        max_tokens: 4096,
        thinking: { type: 'enabled', budget_tokens: 2048 },
        messages: [{ role: 'user', content: 'stream me' }],
      });
      const events: string[] = [];
      stream.on('streamEvent', (event) => events.push(event.type));
      const message = await stream.finalMessage();
      expect(message.model).toBe('claude-echo');
      expect(message.content[0]).toEqual({
        type: 'thinking',
        thinking: 'Let me think about stream me.',
        signature: `sig-${Buffer.from('stream me').toString('base64')}`,
      });
      expect(message.content[1]).toMatchObject({ type: 'text', text: 'echo: stream me' });
      expect(events[0]).toBe('message_start');
      expect(events.at(-1)).toBe('message_stop');
      const record = await waitForUsageRecord(gw, 'messages-native-stream');
      // The prompt is input 2 + cache writes 2 + cache reads 4; the output is message_delta's count, which the
      // stand-in makes the words of every block it sent (the thinking and the text).
      const output = words('Let me think about stream me.') + words('echo: stream me');
      expect(message.usage.output_tokens).toBe(output);
      expect(record).toMatchObject({
        endpoint: 'messages',
        model: 'claude-echo',
        stream: true,
        prompt_tokens: 8,
        completion_tokens: output,
        total_tokens: 8 + output,
        outcome: 'ok',
      });
      const metrics = await (await fetch(`${gw.url}/metrics`)).text();
      expect(metrics).toMatch(
        /switchyard_requests_total\{team="messages-native-stream",model="claude-echo",backend="claude",endpoint="messages",status_code="200",stream="true",outcome="ok"\} 1/,
      );
      expect(metrics).toMatch(
        /switchyard_tokens_total\{team="messages-native-stream",model="claude-echo",backend="claude",endpoint="messages",type="prompt"\} 8/,
      );
    });

    it('replays thinking blocks with their signatures unchanged through a tool round trip', async () => {
      const first = await client.messages.create({
        model: 'claude-echo',
        max_tokens: 4096,
        thinking: { type: 'enabled', budget_tokens: 1024 },
        tools: weather,
        messages: [{ role: 'user', content: 'Paris' }],
      });
      expect(first.stop_reason).toBe('tool_use');
      const toolUse = first.content.find((b) => b.type === 'tool_use')!;
      expect(toolUse).toMatchObject({ name: 'get_weather', input: { query: 'Paris' } });
      const second = await client.messages.create({
        model: 'claude-echo',
        max_tokens: 4096,
        thinking: { type: 'enabled', budget_tokens: 1024 },
        tools: weather,
        messages: [
          { role: 'user', content: 'Paris' },
          { role: 'assistant', content: first.content },
          { role: 'user', content: [{ type: 'tool_result', tool_use_id: toolUse.id, content: 'sunny' }] },
        ],
      });
      expect(second.content.find((b) => b.type === 'text')).toMatchObject({ text: 'tool said: sunny' });
      expect(anthropic.last().body.messages[1].content).toEqual(JSON.parse(JSON.stringify(first.content)));
    });

    it("errors come in Anthropic's shape with the SDK's error classes; mid-stream errors as an error event", async () => {
      const overloaded = await client.messages
        .create({ model: 'claude-overloaded', max_tokens: 10, messages: [{ role: 'user', content: 'x' }] })
        .catch((e: unknown) => e);
      expect(overloaded).toBeInstanceOf(Anthropic.APIError);
      expect((overloaded as InstanceType<typeof Anthropic.APIError>).status).toBeGreaterThanOrEqual(500);
      expect((overloaded as InstanceType<typeof Anthropic.APIError>).error).toMatchObject({
        type: 'error',
        error: { type: expect.stringMatching(/overloaded_error|api_error/) },
      });

      const midstream = client.messages.stream({
        model: 'claude-midstream',
        max_tokens: 100,
        messages: [{ role: 'user', content: 'one two three' }],
      });
      const failure = await midstream.finalMessage().catch((e: unknown) => e);
      expect(failure).toBeInstanceOf(Anthropic.APIError);
      expect(String((failure as Error).message)).toMatch(/overloaded/i);
    });

    it('count_tokens asks the Anthropic backend', async () => {
      const { data, response } = await client.messages
        .countTokens({
          model: 'claude-echo',
          system: 'one two',
          messages: [{ role: 'user', content: 'three four five' }],
        })
        .withResponse();
      expect(data).toEqual({ input_tokens: 5 });
      expect(response.headers.get('x-switchyard-token-count')).toBe('exact');
      expect(anthropic.last().path).toBe('/v1/messages/count_tokens');
    });
  });

  describe('to an OpenAI-compatible backend (translated)', () => {
    it('answers a Message: system, images and text become chat messages; the reply becomes text blocks', async () => {
      const png = Buffer.from('89504e470d0a1a0a', 'hex').toString('base64');
      const message = await client.messages.create({
        model: 'echo',
        max_tokens: 50,
        system: [
          { type: 'text', text: 'x-anthropic-billing-header: cc_version=2.1.330; cch=abc;\nYou are terse.' },
        ],
        stop_sequences: ['END'],
        temperature: 0.5,
        messages: [
          {
            role: 'user',
            content: [
              { type: 'text', text: 'what is this' },
              { type: 'image', source: { type: 'base64', media_type: 'image/png', data: png } },
            ],
          },
        ],
      } as Anthropic.MessageCreateParamsNonStreaming);
      expect(message).toMatchObject({
        type: 'message',
        role: 'assistant',
        model: 'echo',
        stop_reason: 'end_turn',
        stop_sequence: null,
      });
      expect(message.id).toMatch(/^msg_/);
      expect(message.content).toHaveLength(1);
      expect(message.content[0].type).toBe('text');
      // The stand-in's words: the system text without Claude Code's billing header, and the user's text part.
      expect(message.usage).toMatchObject({
        input_tokens: words('You are terse.') + words('what is this'),
        cache_read_input_tokens: 0,
        output_tokens: words('echo: what is this'),
      });
      const sent = openai.last().body;
      expect(sent).toMatchObject({ model: 'echo', max_tokens: 50, stop: ['END'], temperature: 0.5 });
      expect(sent.messages[0]).toEqual({ role: 'system', content: 'You are terse.' });
      expect(sent.messages[1]).toEqual({
        role: 'user',
        content: [
          { type: 'text', text: 'what is this' },
          { type: 'image_url', image_url: { url: `data:image/png;base64,${png}` } },
        ],
      });
    });

    it("keeps tools with defer_loading out of a translated request's tool list, as Anthropic keeps them out of the model's context", async () => {
      // Claude Code sends this one in every request (with ToolSearch to load the deferred ones later).
      const placeholder = {
        name: 'DeferredToolPlaceholder',
        description: 'Reserved placeholder that keeps deferred tool loading active; never call this tool.',
        input_schema: { type: 'object' as const, properties: {} },
        defer_loading: true,
      };
      await client.messages.create({
        model: 'gpt-tools',
        max_tokens: 100,
        tools: [...weather, placeholder],
        tool_choice: { type: 'any' },
        messages: [{ role: 'user', content: 'Oslo' }],
      });
      const sent = openai.last().body as { tools: Array<{ function: { name: string } }> };
      expect(sent.tools.map((tool) => tool.function.name)).toEqual(['get_weather']);
    });

    it('translates a tool round trip, streamed: tool_use blocks with parsed input, tool_result back as a tool message', async () => {
      const stream = client.messages.stream({
        model: 'gpt-tools',
        max_tokens: 100,
        tools: weather,
        tool_choice: { type: 'any', disable_parallel_tool_use: true },
        messages: [{ role: 'user', content: 'Oslo' }],
      });
      const events: string[] = [];
      stream.on('streamEvent', (event) => events.push(event.type));
      const first = await stream.finalMessage();
      expect(first.stop_reason).toBe('tool_use');
      expect(first.content).toEqual([
        {
          type: 'tool_use',
          id: 'call_abc123',
          name: 'get_weather',
          input: { query: 'Oslo' },
          caller: { type: 'direct' },
        },
      ]);
      expect(events.filter((e) => e === 'message_start')).toHaveLength(1);
      expect(events.at(-1)).toBe('message_stop');
      expect(openai.last().body).toMatchObject({
        tool_choice: 'required',
        parallel_tool_calls: false,
        tools: [{ type: 'function', function: { name: 'get_weather', parameters: weather[0].input_schema } }],
      });

      const second = await client.messages.create({
        model: 'gpt-tools',
        max_tokens: 100,
        tools: weather,
        messages: [
          { role: 'user', content: 'Oslo' },
          { role: 'assistant', content: first.content },
          {
            role: 'user',
            content: [
              { type: 'tool_result', tool_use_id: 'call_abc123', content: [{ type: 'text', text: 'rainy' }] },
            ],
          },
        ],
      });
      expect(second.content).toEqual([{ type: 'text', text: 'tool said: rainy', citations: null }]);
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

    it('maps thinking to the family option and streams reasoning as a signed thinking block, which is dropped on replay to Anthropic', async () => {
      const { token: own } = await gw.teamToken('messages-translated-stream');
      const stream = new Anthropic({ apiKey: own, baseURL: gw.url, maxRetries: 0 }).messages.stream({
        model: 'gpt-reasoner',
        max_tokens: 9000,
        thinking: { type: 'enabled', budget_tokens: 8000 },
        messages: [{ role: 'user', content: 'ponder this' }],
      });
      const message = await stream.finalMessage();
      expect(openai.last().body.reasoning_effort).toBeDefined();
      expect(openai.last().body.thinking).toBeUndefined();
      expect(message.content[0]).toMatchObject({ type: 'thinking', thinking: 'Thinking it over.' });
      const signature = (message.content[0] as { signature: string }).signature;
      expect(signature).toMatch(/^switchyard:/);
      expect(message.content[1]).toMatchObject({ type: 'text', text: 'echo: ponder this' });
      // The stand-in's usage, carried over: "ponder this" in, its reasoning and answer words out.
      const output = words(REASONING) + words('echo: ponder this');
      expect(message.usage).toMatchObject({ input_tokens: 2, output_tokens: output });

      // The same conversation continued on an Anthropic model: the gateway's own signature must not reach it.
      const next = await client.messages.create({
        model: 'claude-echo',
        max_tokens: 100,
        messages: [
          { role: 'user', content: 'ponder this' },
          { role: 'assistant', content: message.content },
          { role: 'user', content: 'go on' },
        ],
      });
      expect(next.content[0]).toMatchObject({ type: 'text', text: 'echo: go on' });
      expect(anthropic.last().body.messages[1].content.map((b: { type: string }) => b.type)).toEqual([
        'text',
      ]);

      const record = await waitForUsageRecord(gw, 'messages-translated-stream');
      expect(record).toMatchObject({
        endpoint: 'messages',
        model: 'gpt-reasoner',
        stream: true,
        outcome: 'ok',
        prompt_tokens: 2,
        completion_tokens: output,
        total_tokens: 2 + output,
        // The stand-in reports no reasoning_tokens: the gateway counted the reasoning it relayed (o200k_base).
        reasoning_tokens: countTokens(REASONING),
        estimated: true,
      });
    });

    it('drops thinking for a model that cannot think (Claude Code asks every model) instead of refusing', async () => {
      const message = await client.messages.create({
        model: 'echo',
        max_tokens: 2000,
        thinking: { type: 'adaptive' } as never,
        messages: [{ role: 'user', content: 'hi' }],
      });
      expect(message.content[0]).toMatchObject({ type: 'text', text: 'echo: hi' });
      expect(openai.last().body.thinking).toBeUndefined();
      expect(openai.last().body.reasoning_effort).toBeUndefined();
    });

    it('fails over from an overloaded Anthropic deployment to an OpenAI one within one request', async () => {
      const { data, response } = await client.messages
        .create({ model: 'claude-or-gpt', max_tokens: 50, messages: [{ role: 'user', content: 'anyone' }] })
        .withResponse();
      expect(data.content[0]).toMatchObject({ type: 'text', text: 'echo: anyone' });
      expect(response.headers.get('x-switchyard-attempts')).toBe('2');
    });

    it('count_tokens is the gateway estimate, said to be one', async () => {
      const { data, response } = await client.messages
        .countTokens({ model: 'echo', messages: [{ role: 'user', content: 'count these words please' }] })
        .withResponse();
      expect(data.input_tokens).toBeGreaterThan(4);
      expect(response.headers.get('x-switchyard-token-count')).toBe('estimated');
    });
  });

  describe('to a Gemini backend (translated)', () => {
    it("maps the thinking budget to Gemini's thinkingConfig and its thought parts to a thinking block; tool calls round-trip", async () => {
      const stream = client.messages.stream({
        model: 'gemini',
        max_tokens: 4096,
        thinking: { type: 'enabled', budget_tokens: 2048 },
        messages: [{ role: 'user', content: 'Rome' }],
      });
      const message = await stream.finalMessage();
      expect(gemini.last().body.generationConfig).toMatchObject({
        thinkingConfig: { thinkingBudget: 2048, includeThoughts: true },
        maxOutputTokens: 4096,
      });
      expect(message.content.map((b) => b.type)).toEqual(['thinking', 'text']);
      expect(message.content[1]).toMatchObject({ text: 'echo: Rome' });

      const first = await client.messages.create({
        model: 'gemini',
        max_tokens: 100,
        tools: weather,
        messages: [{ role: 'user', content: 'Lima' }],
      });
      expect(first.stop_reason).toBe('tool_use');
      const call = first.content.find((b) => b.type === 'tool_use')!;
      expect(call).toMatchObject({ name: 'get_weather', input: { query: 'Lima' } });
      const second = await client.messages.create({
        model: 'gemini',
        max_tokens: 100,
        tools: weather,
        messages: [
          { role: 'user', content: 'Lima' },
          { role: 'assistant', content: first.content },
          { role: 'user', content: [{ type: 'tool_result', tool_use_id: call.id, content: 'foggy' }] },
        ],
      });
      expect((second.content[0] as { text: string }).text).toMatch(/^tool get_weather said: .*foggy/);
    });
  });

  it('translated Messages (OpenAI-compatible and Gemini) carry every usage member Anthropic sends, plain and streamed', async () => {
    for (const model of ['echo', 'gemini']) {
      const message = await client.messages.create({
        model,
        max_tokens: 100,
        messages: [{ role: 'user', content: 'usage please' }],
      });
      expect(message.usage).toMatchObject({
        cache_creation: { ephemeral_5m_input_tokens: 0, ephemeral_1h_input_tokens: 0 },
        service_tier: 'standard',
        cache_creation_input_tokens: 0,
        server_tool_use: null,
      });
      expect(message).toMatchObject({ stop_details: null, container: null });
      const events: any[] = [];
      const stream = client.messages.stream({
        model,
        max_tokens: 100,
        messages: [{ role: 'user', content: 'usage please' }],
      });
      stream.on('streamEvent', (event) => events.push(event));
      await stream.finalMessage();
      expect(events[0].message.usage).toMatchObject({
        cache_creation: { ephemeral_5m_input_tokens: 0, ephemeral_1h_input_tokens: 0 },
        service_tier: 'standard',
      });
      const delta = events.find((event) => event.type === 'message_delta');
      expect(Object.keys(delta.usage).sort()).toEqual([
        'cache_creation_input_tokens',
        'cache_read_input_tokens',
        'input_tokens',
        'output_tokens',
        'output_tokens_details',
        'server_tool_use',
      ]);
      expect(delta.usage).toMatchObject({
        cache_creation_input_tokens: 0,
        cache_read_input_tokens: 0,
        server_tool_use: null,
      });
      expect(delta.delta).toEqual({
        stop_reason: 'end_turn',
        stop_sequence: null,
        stop_details: null,
        container: null,
      });
    }
  });

  it("team limits apply as for chat: a refusal is a RateLimitError in Anthropic's shape with Retry-After", async () => {
    expect(
      (await gw.admin('POST', '/admin/v1/teams', { id: 'messages-rpm', limits: { requestsPerMinute: 1 } }))
        .status,
    ).toBe(201);
    const { token: limited } = await gw.teamToken('messages-rpm');
    const sdk = new Anthropic({ apiKey: limited, baseURL: gw.url, maxRetries: 0 });
    await sdk.messages.create({
      model: 'echo',
      max_tokens: 10,
      messages: [{ role: 'user', content: 'first' }],
    });
    const refused = await sdk.messages
      .create({ model: 'echo', max_tokens: 10, messages: [{ role: 'user', content: 'second' }] })
      .catch((e: unknown) => e);
    expect(refused).toBeInstanceOf(Anthropic.RateLimitError);
    expect((refused as InstanceType<typeof Anthropic.APIError>).error).toMatchObject({
      type: 'error',
      error: { type: 'rate_limit_error', message: expect.stringMatching(/requestsPerMinute/) },
    });
    expect((refused as InstanceType<typeof Anthropic.APIError>).headers?.get('retry-after')).toMatch(/^\d+$/);
  });

  it('the usage API (grouped by endpoint) and /metrics agree per endpoint', async () => {
    const { token: own } = await gw.teamToken('per-endpoint');
    await gw
      .openai(own)
      .chat.completions.create({ model: 'echo', messages: [{ role: 'user', content: 'one two three' }] });
    await new Anthropic({ apiKey: own, baseURL: gw.url, maxRetries: 0 }).messages.create({
      model: 'echo',
      max_tokens: 20,
      messages: [{ role: 'user', content: 'four five' }],
    });
    await new Anthropic({ apiKey: own, baseURL: gw.url, maxRetries: 0 }).messages.create({
      model: 'claude-echo',
      max_tokens: 20,
      messages: [{ role: 'user', content: 'six' }],
    });
    await gw.openai(own).embeddings.create({ model: 'embedder', input: 'seven eight nine ten' });
    const usage = await waitForOwnUsageSummary(gw, own, 'groupBy=endpoint', 4);
    expect(
      usage.data.map((row: { endpoint: string; requests: number }) => [row.endpoint, row.requests]),
    ).toEqual([
      ['chat.completions', 1],
      ['embeddings', 1],
      ['messages', 2],
    ]);
    const metrics = await (await fetch(`${gw.url}/metrics`)).text();
    for (const row of usage.data as Array<{
      endpoint: string;
      prompt_tokens: number;
      completion_tokens: number;
      requests: number;
    }>) {
      const sum = (type: string) =>
        [
          ...metrics.matchAll(
            new RegExp(
              `switchyard_tokens_total\\{team="per-endpoint",model="[^"]+",backend="[^"]+",endpoint="${row.endpoint}",type="${type}"\\} (\\d+)`,
              'g',
            ),
          ),
        ].reduce((n, m) => n + Number(m[1]), 0);
      expect(sum('prompt')).toBe(row.prompt_tokens);
      expect(sum('completion')).toBe(row.completion_tokens);
      const requests = [
        ...metrics.matchAll(
          new RegExp(
            `switchyard_requests_total\\{team="per-endpoint",[^}]*endpoint="${row.endpoint}",[^}]*\\} (\\d+)`,
            'g',
          ),
        ),
      ].reduce((n, m) => n + Number(m[1]), 0);
      expect(requests).toBe(row.requests);
    }
  });

  describe('auth and validation', () => {
    it('takes the team token as x-api-key or Authorization: Bearer, with any anthropic-version', async () => {
      const bearer = new Anthropic({
        authToken: token,
        apiKey: null,
        baseURL: gw.url,
        maxRetries: 0,
        defaultHeaders: { 'anthropic-version': '2023-06-01' },
      });
      const message = await bearer.messages.create({
        model: 'echo',
        max_tokens: 10,
        messages: [{ role: 'user', content: 'bearer' }],
      });
      expect(message.content[0]).toMatchObject({ text: 'echo: bearer' });
      const raw = await fetch(`${gw.url}/v1/messages?beta=true`, {
        method: 'POST',
        headers: {
          'x-api-key': token,
          'anthropic-version': '2099-01-01',
          'content-type': 'application/json',
        },
        body: JSON.stringify({ model: 'echo', max_tokens: 10, messages: [{ role: 'user', content: 'raw' }] }),
      });
      expect(raw.status).toBe(200);
      expect(raw.headers.get('request-id')).toBeTruthy();
    });

    it('refuses with the right SDK error classes in Anthropic shape', async () => {
      const wrongKey = await new Anthropic({ apiKey: 'sk-wrong', baseURL: gw.url, maxRetries: 0 }).messages
        .create({ model: 'echo', max_tokens: 10, messages: [{ role: 'user', content: 'x' }] })
        .catch((e: unknown) => e);
      expect(wrongKey).toBeInstanceOf(Anthropic.AuthenticationError);
      expect((wrongKey as InstanceType<typeof Anthropic.APIError>).error).toMatchObject({
        type: 'error',
        error: { type: 'authentication_error' },
      });

      const unknown = await client.messages
        .create({ model: 'no-such-model', max_tokens: 10, messages: [{ role: 'user', content: 'x' }] })
        .catch((e: unknown) => e);
      expect(unknown).toBeInstanceOf(Anthropic.NotFoundError);
      expect((unknown as InstanceType<typeof Anthropic.APIError>).error).toMatchObject({
        error: { type: 'not_found_error' },
      });

      const embedding = await client.messages
        .create({ model: 'embedder', max_tokens: 10, messages: [{ role: 'user', content: 'x' }] })
        .catch((e: unknown) => e);
      expect(embedding).toBeInstanceOf(Anthropic.BadRequestError);

      for (const body of [
        { model: 'echo', messages: [{ role: 'user', content: 'no max_tokens' }] },
        { model: 'echo', max_tokens: 10, messages: [] },
        { model: 'echo', max_tokens: 10, messages: [{ role: 'tool', content: 'x' }] },
        {
          model: 'echo',
          max_tokens: 10,
          messages: [{ role: 'user', content: [{ type: 'tool_use', name: 'x' }] }],
        },
        {
          model: 'echo',
          max_tokens: 1000,
          thinking: { type: 'enabled', budget_tokens: 2000 },
          messages: [{ role: 'user', content: 'x' }],
        },
        {
          model: 'echo',
          max_tokens: 10,
          tools: [{ name: 'no_schema' }],
          messages: [{ role: 'user', content: 'x' }],
        },
      ]) {
        const response = await fetch(`${gw.url}/v1/messages`, {
          method: 'POST',
          headers: { 'x-api-key': token, 'content-type': 'application/json' },
          body: JSON.stringify(body),
        });
        expect(response.status).toBe(400);
        expect(await response.json()).toMatchObject({
          type: 'error',
          error: { type: 'invalid_request_error', message: expect.any(String) },
        });
      }
      const notJson = await fetch(`${gw.url}/v1/messages`, {
        method: 'POST',
        headers: { 'x-api-key': token, 'content-type': 'application/json' },
        body: '{"model":',
      });
      expect(notJson.status).toBe(400);
      expect(await notJson.json()).toMatchObject({ type: 'error', error: { type: 'invalid_request_error' } });
    });
  });
});
