import { countTokens } from 'gpt-tokenizer'; // o200k_base, the gateway's tokenizer
import { AnthropicUpstream } from '../support/anthropic-upstream';
import { eventually } from '../support/eventually';
import { GeminiUpstream } from '../support/gemini-upstream';
import { OpenAIUpstream } from '../support/openai-upstream';
import { words } from '../support/standin-server';
import { startTestGateway, type TestGateway } from '../support/test-gateway';
import { waitForUsageRecord, waitForUsageRecords, waitForUsageSummary } from '../support/usage';

const PNG = 'data:image/png;base64,iVBORw0KGgo=';
const weather = [
  {
    type: 'function' as const,
    function: {
      name: 'get_weather',
      description: 'Weather for a city',
      parameters: { type: 'object', properties: { query: { type: 'string' } }, required: ['query'] },
    },
  },
];

/** One OpenAI request format through Anthropic and Gemini backends and OpenAI-compatible reasoning models. */
describe('model families through one OpenAI format', () => {
  let anthropic: AnthropicUpstream;
  let gemini: GeminiUpstream;
  let openai: OpenAIUpstream;
  let gw: TestGateway;
  let client: ReturnType<TestGateway['openai']>;

  beforeAll(async () => {
    [anthropic, gemini, openai] = await Promise.all([
      new AnthropicUpstream().start(),
      new GeminiUpstream().start(),
      new OpenAIUpstream().start(),
    ]);
    gw = await startTestGateway({
      upstreamUrl: openai.url,
      config: {
        backends: {
          claude: { type: 'anthropic', baseUrl: anthropic.url, apiKey: '${TEST_UPSTREAM_KEY}' },
          google: { type: 'gemini', baseUrl: gemini.url, apiKey: '${TEST_UPSTREAM_KEY}' },
        },
        models: {
          claude: { backend: 'claude', upstreamModel: 'claude-echo', thinking: 'native', maxTokens: 2048 },
          'claude-plain': { backend: 'claude', upstreamModel: 'claude-echo' },
          // The shipped default: a model that takes only adaptive thinking.
          'claude-sonnet-5-5': { backend: 'claude', upstreamModel: 'claude-sonnet-5-5', thinking: 'native' },
          'claude-overloaded': { backend: 'claude', upstreamModel: 'claude-overloaded' },
          'claude-midstream': { backend: 'claude', upstreamModel: 'claude-midstream' },
          gemini: {
            backend: 'google',
            upstreamModel: 'gemini-echo',
            thinking: 'native',
            thinkingBudget: { min: 0, max: 8192 },
          },
          'gemini-exhausted': { backend: 'google', upstreamModel: 'gemini-exhausted' },
          'gemini-unfinished': { backend: 'google', upstreamModel: 'gemini-unfinished' },
          'o-reasoner': { backend: 'standin', upstreamModel: 'echo', thinking: 'reasoning_effort' },
          qwen: {
            backend: 'standin',
            upstreamModel: 'vllm-echo', // a vLLM: it takes chat_template_kwargs, which OpenAI refuses
            thinking: 'chat_template_kwargs',
            budgetField: 'thinking_token_budget',
          },
          'vllm-reasoner': { backend: 'standin', upstreamModel: 'reasoner' },
        },
      },
    });
    client = gw.openai((await gw.teamToken('families')).token);
  });
  afterAll(async () => {
    await gw.close();
    await Promise.all([anthropic.stop(), gemini.stop(), openai.stop()]);
  });

  async function collect(stream: AsyncIterable<any>) {
    const chunks: any[] = [];
    for await (const chunk of stream) chunks.push(chunk);
    const deltas = chunks.flatMap((c) => c.choices.map((choice: any) => choice.delta));
    return {
      chunks,
      content: deltas.map((d) => d.content ?? '').join(''),
      reasoning: deltas.map((d) => d.reasoning_content ?? '').join(''),
      thinkingBlocks: deltas.flatMap((d) => d.thinking_blocks ?? []),
      toolArgs: deltas
        .flatMap((d) => d.tool_calls ?? [])
        .map((t: any) => t.function?.arguments ?? '')
        .join(''),
      toolCalls: deltas.flatMap((d) => d.tool_calls ?? []),
      finish: chunks
        .flatMap((c) => c.choices)
        .map((c: any) => c.finish_reason)
        .filter(Boolean),
      usage: chunks.find((c) => c.usage)?.usage,
    };
  }

  describe('anthropic', () => {
    it('translates the request: system on top, same-role turns merged, max_tokens default, stop_sequences, its own auth headers', async () => {
      const completion = await client.chat.completions.create({
        model: 'claude-plain',
        messages: [
          { role: 'system', content: 'Be brief.' },
          { role: 'developer', content: 'Answer in English.' },
          { role: 'user', content: 'Hello' },
          {
            role: 'user',
            content: [
              { type: 'text', text: 'there' },
              { type: 'image_url', image_url: { url: PNG } },
              { type: 'image_url', image_url: { url: 'https://example.com/cat.jpg' } },
            ],
          },
        ],
        stop: 'END',
        temperature: 0.2,
      });
      const sent = anthropic.last();
      expect(sent.headers).toMatchObject({
        'x-api-key': 'upstream-secret-key',
        'anthropic-version': '2023-06-01',
      });
      expect(sent.headers.authorization).toBeUndefined();
      expect(sent.body).toEqual({
        model: 'claude-echo',
        max_tokens: 4096,
        system: 'Be brief.\n\nAnswer in English.',
        messages: [
          {
            role: 'user',
            content: [
              { type: 'text', text: 'Hello' },
              { type: 'text', text: 'there' },
              { type: 'image', source: { type: 'base64', media_type: 'image/png', data: 'iVBORw0KGgo=' } },
              { type: 'image', source: { type: 'url', url: 'https://example.com/cat.jpg' } },
            ],
          },
        ],
        stop_sequences: ['END'],
        temperature: 0.2,
      });
      // `refusal` is a required member of OpenAI's message (null: Anthropic has no separate refusal text).
      expect(completion).toMatchObject({
        object: 'chat.completion',
        model: 'claude-plain',
        choices: [
          {
            index: 0,
            message: { role: 'assistant', content: 'echo: Hello there', refusal: null },
            finish_reason: 'stop',
          },
        ],
      });
      // Cache reads (4) and writes (2) are input tokens too: total = prompt + completion holds.
      const u = completion.usage!;
      expect(u.prompt_tokens_details).toEqual({ cached_tokens: 4, cache_write_tokens: 2 });
      const inputTokens =
        sent.body.messages.reduce((n: number, m: any) => n + words(JSON.stringify(m.content)), 0) +
        words(sent.body.system);
      expect(u.prompt_tokens).toBe(inputTokens + 2 + 4);
      expect(u.total_tokens).toBe(u.prompt_tokens + u.completion_tokens);
    });

    it('streams every event type as OpenAI chunks, with the usage chunk at the end', async () => {
      const s = await collect(
        await client.chat.completions.create({
          model: 'claude-plain',
          stream: true,
          stream_options: { include_usage: true },
          messages: [{ role: 'user', content: 'one two three' }],
        }),
      );
      expect(s.content).toBe('echo: one two three');
      expect(s.chunks[0].choices[0].delta).toEqual({ role: 'assistant', content: '' });
      expect(s.finish).toEqual(['stop']);
      expect(s.usage).toMatchObject({ completion_tokens: 4, prompt_tokens_details: { cached_tokens: 4 } });
      expect(s.chunks.every((c) => c.model === 'claude-plain' && c.object === 'chat.completion.chunk')).toBe(
        true,
      );
    });

    it('thinking: reasoning_content, thinking_blocks with signature, reasoning_tokens counted; never mixed into content', async () => {
      // A team of its own, so its usage records are these two requests'.
      const thinker = gw.openai((await gw.teamToken('families-thinking')).token);
      const completion: any = await thinker.chat.completions.create({
        model: 'claude',
        messages: [{ role: 'user', content: 'why' }],
        thinking: { type: 'enabled', budget_tokens: 1024 },
      } as any);
      expect(anthropic.last().body.thinking).toEqual({ type: 'enabled', budget_tokens: 1024 });
      expect(anthropic.last().body.max_tokens).toBe(2048); // the model's configured default
      const message = completion.choices[0].message;
      expect(message.content).toBe('echo: why');
      expect(message.reasoning_content).toBe('Let me think about why.');
      expect(message.thinking_blocks).toEqual([
        {
          type: 'thinking',
          thinking: 'Let me think about why.',
          signature: `sig-${Buffer.from('why').toString('base64')}`,
        },
      ]);
      // Anthropic reports no thinking count: the gateway counts the thinking text (o200k_base).
      const thinkingTokens = countTokens('Let me think about why.');
      expect(completion.usage.completion_tokens_details.reasoning_tokens).toBe(thinkingTokens);

      const s = await collect(
        <any>await thinker.chat.completions.create({
          model: 'claude',
          stream: true,
          stream_options: { include_usage: true },
          messages: [{ role: 'user', content: 'why' }],
          thinking: { type: 'enabled', budget_tokens: 1024 },
        } as any),
      );
      expect(s.reasoning).toBe('Let me think about why.');
      expect(s.content).toBe('echo: why');
      expect(s.thinkingBlocks).toEqual(message.thinking_blocks);
      expect(s.usage.completion_tokens_details.reasoning_tokens).toBe(thinkingTokens);
      // Anthropic did not count thinking separately, so the gateway did, and says so in the usage record.
      const records = await waitForUsageRecords(gw, 'families-thinking', 2);
      for (const record of records)
        expect(record).toMatchObject({
          model: 'claude',
          estimated: true,
          reasoning_tokens: thinkingTokens,
        });
    });

    it('checks Anthropic thinking rules before any call: budget >= 1024, budget < max_tokens, temperature 1 only', async () => {
      const before = anthropic.requests.length;
      const cases: Array<[object, string, RegExp]> = [
        [{ thinking: { type: 'enabled', budget_tokens: 500 } }, 'thinking.budget_tokens', />= 1024/],
        [
          { thinking: { type: 'enabled', budget_tokens: 3000 } },
          'thinking.budget_tokens',
          /less than max_tokens \(2048\)/,
        ],
        [
          { thinking: { type: 'enabled', budget_tokens: 1024 }, temperature: 0.5 },
          'temperature',
          /only temperature 1/,
        ],
        [
          { thinking: { type: 'enabled', budget_tokens: 1024 }, tools: weather, tool_choice: 'required' },
          'tool_choice',
          /forced tool use/,
        ],
        [{ n: 2 }, 'n', /one choice/],
      ];
      for (const [extra, param, message] of cases) {
        const error: any = await client.chat.completions
          .create({ model: 'claude', messages: [{ role: 'user', content: 'x' }], ...extra } as any)
          .catch((e) => e);
        expect({ status: error.status, param: error.param }).toEqual({ status: 400, param });
        expect(error.message).toMatch(message);
      }
      const plain: any = await client.chat.completions
        .create({
          model: 'claude-plain',
          messages: [{ role: 'user', content: 'x' }],
          thinking: { type: 'enabled', budget_tokens: 2000 },
        } as any)
        .catch((e) => e);
      expect(plain).toMatchObject({ status: 400, param: 'thinking' });
      expect(plain.message).toContain('`claude-plain`');
      expect(anthropic.requests.length).toBe(before);
      // type "disabled" is accepted everywhere.
      await client.chat.completions.create({
        model: 'claude-plain',
        messages: [{ role: 'user', content: 'x' }],
        thinking: { type: 'disabled' },
      } as any);
      await client.chat.completions.create({
        model: 'claude',
        messages: [{ role: 'user', content: 'x' }],
        thinking: { type: 'disabled' },
      } as any);
      expect(anthropic.last().body.thinking).toEqual({ type: 'disabled' });
    });

    it('a model that takes only adaptive thinking: reasoning_effort and Responses effort become adaptive + output_config.effort', async () => {
      const completion = await client.chat.completions.create({
        model: 'claude-sonnet-5-5',
        messages: [{ role: 'user', content: 'why' }],
        reasoning_effort: 'high',
      });
      expect(anthropic.last().body).toMatchObject({
        model: 'claude-sonnet-5-5',
        thinking: { type: 'adaptive' },
        output_config: { effort: 'high' },
      });
      const message: any = completion.choices[0].message;
      expect(message.content).toBe('echo: why');
      expect(message.reasoning_content).toBe('Let me think about why.');
      expect(completion.usage?.total_tokens).toBe(
        completion.usage!.prompt_tokens + completion.usage!.completion_tokens,
      );

      const s = await collect(
        await client.chat.completions.create({
          model: 'claude-sonnet-5-5',
          stream: true,
          messages: [{ role: 'user', content: 'why' }],
          reasoning_effort: 'minimal',
        }),
      );
      expect(anthropic.last().body.output_config).toEqual({ effort: 'low' });
      expect(s.reasoning).toBe('Let me think about why.');
      expect(s.content).toBe('echo: why');

      // Responses: reasoning.effort reaches the model as its effort (by way of the gateway's budget).
      const response = await client.responses.create({
        model: 'claude-sonnet-5-5',
        input: 'why',
        reasoning: { effort: 'medium' },
      });
      expect(anthropic.last().body).toMatchObject({
        thinking: { type: 'adaptive' },
        output_config: { effort: 'medium' },
      });
      expect(response.output_text).toBe('echo: why');

      // reasoning_effort "none" turns thinking off.
      await client.chat.completions.create({
        model: 'claude-sonnet-5-5',
        messages: [{ role: 'user', content: 'x' }],
        reasoning_effort: 'none',
      });
      expect(anthropic.last().body.thinking).toEqual({ type: 'disabled' });

      // Its sampling rules are checked before any call, in OpenAI's error shape.
      const before = anthropic.requests.length;
      for (const [extra, param] of [
        [{ temperature: 0.5 }, 'temperature'],
        [{ top_k: 40 }, 'top_k'],
        [{ reasoning_effort: 'extreme' }, 'reasoning_effort'],
      ] as const) {
        const error: any = await client.chat.completions
          .create({ model: 'claude-sonnet-5-5', messages: [{ role: 'user', content: 'x' }], ...extra } as any)
          .catch((e) => e);
        expect({ status: error.status, type: error.type, param: error.param }).toEqual({
          status: 400,
          type: 'invalid_request_error',
          param,
        });
      }
      expect(anthropic.requests.length).toBe(before);
    });

    it('tools both ways, and multi-turn tool use with thinking sends the thinking blocks back unchanged', async () => {
      const first: any = await client.chat.completions.create({
        model: 'claude',
        tools: weather,
        messages: [{ role: 'user', content: 'Paris' }],
        thinking: { type: 'enabled', budget_tokens: 1024 },
      } as any);
      expect(anthropic.last().body.tools).toEqual([
        {
          name: 'get_weather',
          description: 'Weather for a city',
          input_schema: weather[0].function.parameters,
        },
      ]);
      const message = first.choices[0].message;
      expect(first.choices[0].finish_reason).toBe('tool_calls');
      expect(message.content).toBeNull();
      expect(message.tool_calls).toEqual([
        {
          id: 'toolu_01A09q90qw90lq917835lq9',
          type: 'function',
          function: { name: 'get_weather', arguments: '{"query":"Paris"}' },
        },
      ]);

      const second: any = await client.chat.completions.create({
        model: 'claude',
        tools: weather,
        thinking: { type: 'enabled', budget_tokens: 1024 },
        messages: [
          { role: 'user', content: 'Paris' },
          message,
          { role: 'tool', tool_call_id: message.tool_calls[0].id, content: 'sunny' },
        ],
      } as any);
      expect(anthropic.last().body.messages).toEqual([
        { role: 'user', content: [{ type: 'text', text: 'Paris' }] },
        {
          role: 'assistant',
          content: [
            ...message.thinking_blocks,
            {
              type: 'tool_use',
              id: 'toolu_01A09q90qw90lq917835lq9',
              name: 'get_weather',
              input: { query: 'Paris' },
            },
          ],
        },
        {
          role: 'user',
          content: [{ type: 'tool_result', tool_use_id: 'toolu_01A09q90qw90lq917835lq9', content: 'sunny' }],
        },
      ]);
      expect(second.choices[0].message.content).toBe('tool said: sunny');

      const s = await collect(
        await client.chat.completions.create({
          model: 'claude-plain',
          stream: true,
          tools: weather,
          tool_choice: { type: 'function', function: { name: 'get_weather' } },
          messages: [{ role: 'user', content: 'Rome' }],
        }),
      );
      expect(anthropic.last().body.tool_choice).toEqual({ type: 'tool', name: 'get_weather' });
      expect(s.toolCalls[0]).toMatchObject({
        index: 0,
        id: 'toolu_01A09q90qw90lq917835lq9',
        type: 'function',
        function: { name: 'get_weather' },
      });
      expect(JSON.parse(s.toolArgs)).toEqual({ query: 'Rome' });
      expect(s.finish).toEqual(['tool_calls']);
    });

    it('errors: 529 overloaded -> 503; an in-stream error event -> an in-band OpenAI error', async () => {
      await expect(
        client.chat.completions.create({
          model: 'claude-overloaded',
          messages: [{ role: 'user', content: 'x' }],
        }),
      ).rejects.toMatchObject({ status: 503 });
      const stream = await client.chat.completions.create({
        model: 'claude-midstream',
        stream: true,
        messages: [{ role: 'user', content: 'a b c' }],
      });
      await expect(collect(stream)).rejects.toThrow(/Overloaded/);
    });
  });

  describe('gemini', () => {
    it('translates roles, systemInstruction, generationConfig and images; maps the answer and usage', async () => {
      const completion = await client.chat.completions.create({
        model: 'gemini',
        messages: [
          { role: 'system', content: 'Be brief.' },
          {
            role: 'user',
            content: [
              { type: 'text', text: 'Hi' },
              { type: 'image_url', image_url: { url: PNG } },
            ],
          },
          { role: 'assistant', content: 'Hello!' },
          { role: 'user', content: 'Again' },
        ],
        temperature: 0.3,
        top_p: 0.9,
        max_tokens: 100,
        stop: ['X', 'Y'],
      });
      const sent = gemini.last();
      expect(sent.path).toBe('/v1beta/models/gemini-echo:generateContent');
      expect(sent.headers['x-goog-api-key']).toBe('upstream-secret-key');
      expect(sent.body).toEqual({
        contents: [
          {
            role: 'user',
            parts: [{ text: 'Hi' }, { inlineData: { mimeType: 'image/png', data: 'iVBORw0KGgo=' } }],
          },
          { role: 'model', parts: [{ text: 'Hello!' }] },
          { role: 'user', parts: [{ text: 'Again' }] },
        ],
        systemInstruction: { parts: [{ text: 'Be brief.' }] },
        generationConfig: { temperature: 0.3, topP: 0.9, maxOutputTokens: 100, stopSequences: ['X', 'Y'] },
      });
      expect(completion.choices[0]).toMatchObject({
        message: { role: 'assistant', content: 'echo: Again', refusal: null },
        finish_reason: 'stop',
      });
      // The Gemini stand-in counts each content's parts as the words of their JSON (one each here) and its answer.
      expect(completion.usage).toMatchObject({ prompt_tokens: 3, completion_tokens: 2, total_tokens: 5 });
    });

    it('thinking: thinkingConfig with the budget; thought parts become reasoning_content and thought tokens reasoning_tokens (exact)', async () => {
      const completion: any = await client.chat.completions.create({
        model: 'gemini',
        messages: [{ role: 'user', content: 'why' }],
        thinking: { type: 'enabled', budget_tokens: 2048 },
      } as any);
      expect(gemini.last().body.generationConfig).toEqual({
        thinkingConfig: { thinkingBudget: 2048, includeThoughts: true },
      });
      expect(completion.choices[0].message).toMatchObject({
        content: 'echo: why',
        reasoning_content: 'Thinking about why.',
      });
      // thoughtsTokenCount (3) is part of completion_tokens and is the reasoning count.
      expect(completion.usage).toMatchObject({
        completion_tokens: 2 + 3,
        completion_tokens_details: { reasoning_tokens: 3 },
      });

      const s = await collect(
        <any>await client.chat.completions.create({
          model: 'gemini',
          stream: true,
          stream_options: { include_usage: true },
          messages: [{ role: 'user', content: 'why' }],
          thinking: { type: 'enabled', budget_tokens: 2048 },
        } as any),
      );
      expect(gemini.last().path).toBe('/v1beta/models/gemini-echo:streamGenerateContent?alt=sse');
      expect(s.reasoning).toBe('Thinking about why.');
      expect(s.content).toBe('echo: why');
      expect(s.finish).toEqual(['stop']);
      expect(s.usage).toMatchObject({
        completion_tokens: 5,
        completion_tokens_details: { reasoning_tokens: 3 },
      });

      const outOfRange: any = await client.chat.completions
        .create({
          model: 'gemini',
          messages: [{ role: 'user', content: 'x' }],
          thinking: { type: 'enabled', budget_tokens: 9000 },
        } as any)
        .catch((e) => e);
      expect(outOfRange).toMatchObject({ status: 400, param: 'thinking.budget_tokens' });
      expect(outOfRange.message).toMatch(/from 0 to 8192/);
      await client.chat.completions.create({
        model: 'gemini',
        messages: [{ role: 'user', content: 'x' }],
        thinking: { type: 'disabled' },
      } as any);
      expect(gemini.last().body.generationConfig).toEqual({ thinkingConfig: { thinkingBudget: 0 } });
    });

    it('function calls both ways', async () => {
      const first: any = await client.chat.completions.create({
        model: 'gemini',
        tools: weather,
        tool_choice: 'required',
        messages: [{ role: 'user', content: 'Oslo' }],
      });
      expect(gemini.last().body.tools).toEqual([
        {
          functionDeclarations: [
            {
              name: 'get_weather',
              description: 'Weather for a city',
              parametersJsonSchema: weather[0].function.parameters,
            },
          ],
        },
      ]);
      expect(gemini.last().body.toolConfig).toEqual({ functionCallingConfig: { mode: 'ANY' } });
      const message = first.choices[0].message;
      expect(first.choices[0].finish_reason).toBe('tool_calls');
      expect(message.tool_calls).toEqual([
        {
          id: expect.stringMatching(/^call_[A-Za-z0-9]{24}$/), // Gemini sent none: a random one
          type: 'function',
          function: { name: 'get_weather', arguments: '{"query":"Oslo"}' },
        },
      ]);
      const second = await client.chat.completions.create({
        model: 'gemini',
        tools: weather,
        messages: [
          { role: 'user', content: 'Oslo' },
          message,
          { role: 'tool', tool_call_id: message.tool_calls![0].id, content: 'cold' },
        ],
      });
      expect(gemini.last().body.contents.slice(1)).toEqual([
        { role: 'model', parts: [{ functionCall: { name: 'get_weather', args: { query: 'Oslo' } } }] },
        {
          role: 'user',
          parts: [{ functionResponse: { name: 'get_weather', response: { content: 'cold' } } }],
        },
      ]);
      expect(second.choices[0].message.content).toBe('tool get_weather said: {"content":"cold"}');
      const s = await collect(
        await client.chat.completions.create({
          model: 'gemini',
          stream: true,
          tools: weather,
          messages: [{ role: 'user', content: 'Oslo' }],
        }),
      );
      expect(s.toolCalls).toEqual([
        {
          index: 0,
          id: expect.stringMatching(/^call_[A-Za-z0-9]{24}$/),
          type: 'function',
          function: { name: 'get_weather', arguments: '{"query":"Oslo"}' },
        },
      ]);
      expect(s.finish).toEqual(['tool_calls']);
    });

    it('errors: 429 RESOURCE_EXHAUSTED -> 429', async () => {
      await expect(
        client.chat.completions.create({
          model: 'gemini-exhausted',
          messages: [{ role: 'user', content: 'x' }],
        }),
      ).rejects.toMatchObject({ status: 429 });
    });

    it('n > 1 streamed: every candidate to its end, though they finish in different events; usage counts them all', async () => {
      const plain = await client.chat.completions.create({
        model: 'gemini',
        n: 3,
        messages: [{ role: 'user', content: 'colours' }],
      });
      expect(plain.choices.map((c) => c.message.content)).toEqual([
        'echo: colours',
        'echo: colours (answer 2 of 3)',
        'echo: colours (answer 3 of 3)',
      ]);
      const s = await collect(
        await client.chat.completions.create({
          model: 'gemini',
          n: 3,
          stream: true,
          stream_options: { include_usage: true },
          messages: [{ role: 'user', content: 'colours' }],
        }),
      );
      expect(gemini.last().body.generationConfig).toEqual({ candidateCount: 3 });
      const text = (index: number) =>
        s.chunks
          .flatMap((c) => c.choices.filter((choice: any) => choice.index === index))
          .map((choice: any) => choice.delta.content ?? '')
          .join('');
      expect([0, 1, 2].map(text)).toEqual(plain.choices.map((c) => c.message.content));
      expect(
        s.chunks
          .flatMap((c) => c.choices.filter((choice: any) => choice.finish_reason))
          .map((choice: any) => [choice.index, choice.finish_reason]),
      ).toEqual([
        [0, 'stop'],
        [1, 'stop'],
        [2, 'stop'],
      ]);
      // 2 + 6 + 6 words: the same count as the non-streamed answer's.
      expect(s.usage).toMatchObject({ completion_tokens: 14 });
      expect(plain.usage).toMatchObject({ completion_tokens: 14 });
    });

    it("n > 1 streamed where a candidate never finishes before the stream ends: Gemini's own counts of everything that came, in the usage chunk and the record", async () => {
      const { token } = await gw.teamToken('gemini-unfinished');
      const s = await collect(
        await gw.openai(token).chat.completions.create({
          model: 'gemini-unfinished',
          n: 3,
          stream: true,
          stream_options: { include_usage: true },
          messages: [{ role: 'user', content: 'colours' }],
        }),
      );
      const finished = s.chunks.flatMap((c) => c.choices.filter((choice: any) => choice.finish_reason));
      expect(finished.map((choice: any) => choice.index)).toEqual([0, 1]);
      // Candidate 3's words came (6 of them) though it never finished: 2 + 6 + 6, as Gemini counted them.
      expect(s.usage).toMatchObject({ completion_tokens: 14 });
      const record = await waitForUsageRecord(gw, 'gemini-unfinished');
      expect(record).toMatchObject({ outcome: 'ok', completion_tokens: 14, estimated: false });
    });
  });

  describe('openai-compatible reasoning', () => {
    it('reasoning_effort models get an effort from the budget and max_completion_tokens', async () => {
      for (const [budget, effort] of [
        [1000, 'low'],
        [4000, 'medium'],
        [9000, 'high'],
      ] as const) {
        await client.chat.completions.create({
          model: 'o-reasoner',
          max_tokens: 20000,
          messages: [{ role: 'user', content: 'x' }],
          thinking: { type: 'enabled', budget_tokens: budget },
        } as any);
        expect(openai.last().body).toMatchObject({ reasoning_effort: effort, max_completion_tokens: 20000 });
        expect(openai.last().body).not.toHaveProperty('max_tokens');
        expect(openai.last().body).not.toHaveProperty('thinking');
      }
    });

    it('chat_template_kwargs models get enable_thinking and the configured budget field', async () => {
      await client.chat.completions.create({
        model: 'qwen',
        messages: [{ role: 'user', content: 'x' }],
        thinking: { type: 'enabled', budget_tokens: 512 },
      } as any);
      expect(openai.last().body).toMatchObject({
        chat_template_kwargs: { enable_thinking: true },
        thinking_token_budget: 512,
      });
      await client.chat.completions.create({
        model: 'qwen',
        messages: [{ role: 'user', content: 'x' }],
        thinking: { type: 'disabled' },
      } as any);
      expect(openai.last().body.chat_template_kwargs).toEqual({ enable_thinking: false });
    });

    it('`reasoning` from an OpenAI-compatible server becomes reasoning_content, counted into reasoning_tokens', async () => {
      const completion: any = await client.chat.completions.create({
        model: 'vllm-reasoner',
        messages: [{ role: 'user', content: 'hi' }],
      });
      expect(completion.choices[0].message).toMatchObject({
        content: 'echo: hi',
        reasoning_content: 'Thinking it over.',
      });
      expect(completion.choices[0].message).not.toHaveProperty('reasoning');
      expect(completion.usage.completion_tokens_details.reasoning_tokens).toBe(4); // o200k: "Thinking it over."
      const s = await collect(
        await client.chat.completions.create({
          model: 'vllm-reasoner',
          stream: true,
          messages: [{ role: 'user', content: 'hi' }],
        }),
      );
      expect(s.reasoning).toBe('Thinking it over.');
      expect(s.chunks.some((c) => c.choices[0]?.delta && 'reasoning' in c.choices[0].delta)).toBe(false);
    });
  });

  it("GET /v1/models shows each model's family and whether it reasons", async () => {
    const models = (await client.models.list()).data as any[];
    const byId = Object.fromEntries(models.map((m) => [m.id, m]));
    expect(byId.claude).toMatchObject({ family: 'anthropic', reasoning: true });
    expect(byId['claude-plain']).toMatchObject({ family: 'anthropic', reasoning: false });
    expect(byId.gemini).toMatchObject({ family: 'gemini', reasoning: true });
    expect(byId['o-reasoner']).toMatchObject({ family: 'openai', reasoning: true });
    expect(byId.echo).toMatchObject({ family: 'openai', reasoning: false });
  });

  it('usage accounting and metrics see the same numbers for every family', async () => {
    // Its own team and requests (a streamed and a plain one per family, with thinking where the model has it),
    // so it does not depend on which tests ran before it.
    const own = gw.openai((await gw.teamToken('families-metrics')).token);
    const thinking = { type: 'enabled', budget_tokens: 1024 };
    const models = [
      { model: 'claude', thinking },
      { model: 'claude-plain' },
      { model: 'gemini', thinking },
      { model: 'vllm-reasoner' },
    ];
    for (const extra of models) {
      const body = { messages: [{ role: 'user', content: 'why not' }], ...extra } as any;
      await own.chat.completions.create(body);
      await collect(
        <any>await own.chat.completions.create({
          ...body,
          stream: true,
          stream_options: { include_usage: true },
        }),
      );
    }
    const { data: usage } = await waitForUsageSummary(gw, 'team=families-metrics&groupBy=model', 8);
    expect(usage.map((row) => row.model).sort()).toEqual(models.map((m) => m.model).sort());
    // The metrics move with the same record; polled, as /metrics and the usage store are written apart.
    await eventually(async () => {
      const text = await (await fetch(`${gw.url}/metrics`)).text();
      for (const row of usage) {
        const sum = (type: string) =>
          text
            .split('\n')
            .filter(
              (l) =>
                l.startsWith('switchyard_tokens_total{') &&
                l.includes(`model="${row.model}"`) &&
                l.includes(`type="${type}"`) &&
                l.includes('team="families-metrics"'),
            )
            .reduce((n, l) => n + Number(l.split(' ').pop()), 0);
        expect({
          model: row.model,
          prompt: sum('prompt'),
          completion: sum('completion'),
          reasoning: sum('reasoning'),
        }).toEqual({
          model: row.model,
          prompt: row.prompt_tokens,
          completion: row.completion_tokens,
          reasoning: row.reasoning_tokens,
        });
      }
    });
  });
});
