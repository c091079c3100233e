import Anthropic from '@anthropic-ai/sdk';
import OpenAI from 'openai';
import { AnthropicUpstream } from '../support/anthropic-upstream';
import { GeminiUpstream } from '../support/gemini-upstream';
import { OpenAIUpstream } from '../support/openai-upstream';
import { words } from '../support/standin-server';
import { startTestGateway, type TestGateway } from '../support/test-gateway';
import { waitForUsageRecord } from '../support/usage';

/**
 * The stand-ins behave as strictly as the vendors (they cut answers at max_tokens and stop sequences, refuse, call
 * several tools at once with distinct ids, fail in-band after a 200, refuse members they do not define), and the
 * gateway, in front of each family, carries that to every client API as that API says it: chat completions'
 * finish_reason, Messages' stop_reason, Responses' status and incomplete_details; tool calls with their ids; the
 * client's own error shape.
 *
 * Expected texts are worked out here from what was asked (the stand-ins answer "echo: <text>", a token a word).
 */
type Family = 'openai' | 'anthropic' | 'gemini';
const FAMILIES: Family[] = ['openai', 'anthropic', 'gemini'];
const STREAMED = [false, true];

/** The first `n` tokens of `text` as the stand-ins count them (a word with its trailing space). */
const firstTokens = (text: string, n: number) =>
  text
    .split(/(?<= )/)
    .slice(0, n)
    .join('');

describe('strict vendor stand-ins through every client API', () => {
  let openai: OpenAIUpstream;
  let anthropic: AnthropicUpstream;
  let gemini: GeminiUpstream;
  let gw: TestGateway;
  let chat: OpenAI;
  let messages: Anthropic;

  beforeAll(async () => {
    [openai, anthropic, gemini] = await Promise.all([
      new OpenAIUpstream().start(),
      new AnthropicUpstream().start(),
      new GeminiUpstream().start(),
    ]);
    const on = (family: Family, upstreamModel: string) => ({
      backend: { openai: 'standin', anthropic: 'claude', gemini: 'google' }[family],
      upstreamModel,
    });
    gw = await startTestGateway({
      upstreamUrl: openai.url,
      config: {
        // Two retries: a plan of three calls, so "called once" is a real bound, not the plan's length.
        routing: { retries: { attempts: 2, backoffMs: 5 }, circuit: { failures: 100, cooldownMs: 60_000 } },
        backends: {
          claude: { type: 'anthropic', baseUrl: anthropic.url, apiKey: '${TEST_UPSTREAM_KEY}' },
          google: { type: 'gemini', baseUrl: gemini.url, apiKey: '${TEST_UPSTREAM_KEY}' },
          'openai-responses': {
            type: 'openai',
            baseUrl: openai.url,
            apiKey: '${TEST_UPSTREAM_KEY}',
            responsesApi: true,
          },
        },
        models: {
          'openai-echo': on('openai', 'echo'),
          'native-echo': { backend: 'openai-responses', upstreamModel: 'echo' },
          'anthropic-echo': on('anthropic', 'claude-echo'),
          'gemini-echo': on('gemini', 'gemini-echo'),
          'openai-filtered': on('openai', 'filtered'),
          'openai-refuser': on('openai', 'refuser'),
          'anthropic-refuser': on('anthropic', 'claude-refuser'),
          'gemini-safety': on('gemini', 'gemini-safety'),
          'openai-parallel': on('openai', 'parallel-caller'),
          'anthropic-parallel': on('anthropic', 'claude-parallel'),
          'gemini-parallel': on('gemini', 'gemini-parallel'),
          'openai-midstream': on('openai', 'midstream-error'),
          'anthropic-midstream': on('anthropic', 'claude-midstream'),
          'gemini-midstream': on('gemini', 'gemini-midstream'),
          'anthropic-overloaded': on('anthropic', 'claude-overloaded'),
          'gemini-blocked': on('gemini', 'gemini-blocked'),
          'openai-error-body': on('openai', 'error-body'),
          'native-failer': { backend: 'openai-responses', upstreamModel: 'failer' },
          'native-refuser': { backend: 'openai-responses', upstreamModel: 'refuser' },
          'native-parallel': { backend: 'openai-responses', upstreamModel: 'parallel-caller' },
        },
      },
    });
    const { token } = await gw.teamToken('strict');
    chat = gw.openai(token);
    messages = new Anthropic({ apiKey: token, baseURL: gw.url, maxRetries: 0 });
  });
  afterAll(async () => {
    await gw.close();
    await Promise.all([openai.stop(), anthropic.stop(), gemini.stop()]);
  });

  /** A chat completion, streamed or not, as one answer: text, refusal, finish_reason, tool calls. */
  async function viaChat(body: Record<string, unknown>, stream: boolean) {
    if (!stream) {
      const completion = await chat.chat.completions.create(body as never);
      const choice = (completion as OpenAI.ChatCompletion).choices[0];
      return {
        text: choice.message.content ?? '',
        refusal: choice.message.refusal,
        finish: choice.finish_reason,
        calls: (choice.message.tool_calls ?? []).map((c) => ({
          id: c.id,
          name: (c as OpenAI.ChatCompletionMessageFunctionToolCall).function.name,
          arguments: (c as OpenAI.ChatCompletionMessageFunctionToolCall).function.arguments,
        })),
      };
    }
    const chunks = (await chat.chat.completions.create({
      ...body,
      stream: true,
    } as never)) as unknown as AsyncIterable<OpenAI.ChatCompletionChunk>;
    let text = '';
    let refusal: string | null = null;
    const finishes: string[] = [];
    const calls: Array<{ id: string; name: string; arguments: string }> = [];
    for await (const chunk of chunks) {
      for (const choice of chunk.choices) {
        text += choice.delta.content ?? '';
        if (typeof choice.delta.refusal === 'string') refusal = (refusal ?? '') + choice.delta.refusal;
        if (choice.finish_reason) finishes.push(choice.finish_reason);
        for (const call of choice.delta.tool_calls ?? []) {
          calls[call.index] ??= { id: '', name: '', arguments: '' };
          if (call.id) calls[call.index].id = call.id;
          if (call.function?.name) calls[call.index].name += call.function.name;
          calls[call.index].arguments += call.function?.arguments ?? '';
        }
      }
    }
    expect(finishes).toHaveLength(1);
    return { text, refusal, finish: finishes[0], calls };
  }

  /** A Messages answer, streamed or not (the SDK's own accumulation of the stream). */
  async function viaMessages(body: Anthropic.MessageCreateParamsNonStreaming, stream: boolean) {
    const message = stream
      ? await messages.messages.stream(body).finalMessage()
      : await messages.messages.create(body);
    return {
      text: message.content.map((b) => (b.type === 'text' ? b.text : '')).join(''),
      stopReason: message.stop_reason,
      stopSequence: message.stop_sequence,
      calls: message.content.flatMap((b) =>
        b.type === 'tool_use' ? [{ id: b.id, name: b.name, input: b.input }] : [],
      ),
    };
  }

  /** A Response, streamed or not (streamed: the response its last event carries). */
  async function viaResponses(body: OpenAI.Responses.ResponseCreateParamsNonStreaming, stream: boolean) {
    let response: OpenAI.Responses.Response | undefined;
    if (stream) {
      const events = await chat.responses.create({ ...body, stream: true });
      for await (const event of events)
        if (event.type === 'response.completed' || event.type === 'response.incomplete')
          response = event.response;
    } else response = await chat.responses.create(body);
    if (!response) throw new Error('the stream ended without response.completed or response.incomplete');
    const output = response.output;
    return {
      text: output
        .flatMap((item) => (item.type === 'message' ? item.content : []))
        .map((part) => (part.type === 'output_text' ? part.text : ''))
        .join(''),
      refusal: output
        .flatMap((item) => (item.type === 'message' ? item.content : []))
        .map((part) => (part.type === 'refusal' ? part.refusal : ''))
        .join(''),
      status: response.status,
      incomplete: response.incomplete_details?.reason ?? null,
      calls: output.flatMap((item) =>
        item.type === 'function_call'
          ? [{ id: item.call_id, name: item.name, arguments: item.arguments }]
          : [],
      ),
    };
  }

  describe('an answer cut at the token limit', () => {
    // 20 words: "echo: " and these make 21 tokens, more than the 16 allowed (Responses' smallest limit).
    const question = Array.from({ length: 20 }, (_, i) => `w${i + 1}`).join(' ');
    const cut = firstTokens(`echo: ${question}`, 16);

    describe.each(FAMILIES)('from %s', (family) => {
      it.each(STREAMED)('is finish_reason length on chat completions (stream: %s)', async (stream) => {
        const answer = await viaChat(
          {
            model: `${family}-echo`,
            max_completion_tokens: 16,
            messages: [{ role: 'user', content: question }],
          },
          stream,
        );
        expect(answer).toMatchObject({ text: cut, finish: 'length' });
      });

      it.each(STREAMED)('is stop_reason max_tokens on Messages (stream: %s)', async (stream) => {
        const answer = await viaMessages(
          { model: `${family}-echo`, max_tokens: 16, messages: [{ role: 'user', content: question }] },
          stream,
        );
        expect(answer).toMatchObject({ text: cut, stopReason: 'max_tokens', stopSequence: null });
      });

      it.each(STREAMED)(
        'is an incomplete Response for max_output_tokens on Responses (stream: %s)',
        async (stream) => {
          const answer = await viaResponses(
            { model: `${family}-echo`, max_output_tokens: 16, input: question },
            stream,
          );
          expect(answer).toEqual({
            text: cut,
            status: 'incomplete',
            incomplete: 'max_output_tokens',
            calls: [],
            refusal: '',
          });
        },
      );
    });
  });

  describe("an answer cut at the token limit by OpenAI's Responses API (a backend that speaks it: passed through)", () => {
    const question = Array.from({ length: 20 }, (_, i) => `v${i + 1}`).join(' ');
    const cut = firstTokens(`echo: ${question}`, 16);

    it.each(STREAMED)('is an incomplete Response on Responses, as it came (stream: %s)', async (stream) => {
      const answer = await viaResponses(
        { model: 'native-echo', max_output_tokens: 16, input: `${question} ${stream}` },
        stream,
      );
      expect(answer).toEqual({
        text: cut,
        refusal: '',
        status: 'incomplete',
        incomplete: 'max_output_tokens',
        calls: [],
      });
      expect(openai.calls({ path: '/v1/responses', containing: `${question} ${stream}` })).toBe(1);
    });
  });

  describe('an answer ended by a stop sequence', () => {
    const question = 'alpha beta HALT gamma delta';

    describe.each(FAMILIES)('from %s', (family) => {
      it.each(STREAMED)(
        'is finish_reason stop, without the sequence, on chat completions (stream: %s)',
        async (stream) => {
          const answer = await viaChat(
            { model: `${family}-echo`, stop: ['HALT'], messages: [{ role: 'user', content: question }] },
            stream,
          );
          expect(answer).toMatchObject({ text: 'echo: alpha beta ', finish: 'stop' });
        },
      );

      it.each(STREAMED)('ends the Message on Messages (stream: %s)', async (stream) => {
        const answer = await viaMessages(
          {
            model: `${family}-echo`,
            max_tokens: 100,
            stop_sequences: ['HALT'],
            messages: [{ role: 'user', content: question }],
          },
          stream,
        );
        // Only Anthropic says which sequence stopped it; OpenAI and Gemini report a plain stop, so end_turn.
        expect(answer).toMatchObject(
          family === 'anthropic'
            ? { text: 'echo: alpha beta ', stopReason: 'stop_sequence', stopSequence: 'HALT' }
            : { text: 'echo: alpha beta ', stopReason: 'end_turn', stopSequence: null },
        );
      });
    });
  });

  describe('an answer the vendor stopped for its content', () => {
    const refusing = { openai: 'openai-filtered', anthropic: 'anthropic-refuser', gemini: 'gemini-safety' };

    describe.each(FAMILIES)('from %s', (family) => {
      it.each(STREAMED)(
        'is finish_reason content_filter on chat completions (stream: %s)',
        async (stream) => {
          const answer = await viaChat(
            { model: refusing[family], messages: [{ role: 'user', content: 'something harmful' }] },
            stream,
          );
          expect(answer).toMatchObject({ text: 'echo: ', finish: 'content_filter' });
        },
      );

      it.each(STREAMED)('is stop_reason refusal on Messages (stream: %s)', async (stream) => {
        const answer = await viaMessages(
          {
            model: refusing[family],
            max_tokens: 100,
            messages: [{ role: 'user', content: 'something harmful' }],
          },
          stream,
        );
        expect(answer).toMatchObject({ text: 'echo: ', stopReason: 'refusal' });
      });

      it.each(STREAMED)(
        'is an incomplete Response for content_filter on Responses (stream: %s)',
        async (stream) => {
          const answer = await viaResponses({ model: refusing[family], input: 'something harmful' }, stream);
          expect(answer).toEqual({
            text: 'echo: ',
            status: 'incomplete',
            incomplete: 'content_filter',
            calls: [],
            refusal: '',
          });
        },
      );
    });
  });

  describe("an OpenAI model's refusal (message.refusal, finish_reason stop)", () => {
    const refusal = "I'm sorry, I can't help with that.";

    it.each(STREAMED)('reaches chat completions as the refusal itself (stream: %s)', async (stream) => {
      const answer = await viaChat(
        { model: 'openai-refuser', messages: [{ role: 'user', content: 'something harmful' }] },
        stream,
      );
      expect(answer).toMatchObject({ text: '', refusal, finish: 'stop' });
    });

    it.each(STREAMED)('is stop_reason refusal on Messages, with its words (stream: %s)', async (stream) => {
      const answer = await viaMessages(
        {
          model: 'openai-refuser',
          max_tokens: 100,
          messages: [{ role: 'user', content: 'something harmful' }],
        },
        stream,
      );
      expect(answer).toMatchObject({ text: refusal, stopReason: 'refusal', calls: [] });
    });

    it.each(STREAMED)('is a refusal content part on Responses (stream: %s)', async (stream) => {
      const answer = await viaResponses({ model: 'openai-refuser', input: 'something harmful' }, stream);
      expect(answer).toEqual({ text: '', refusal, status: 'completed', incomplete: null, calls: [] });
    });
  });

  describe('a prompt Gemini blocks (200, no candidates, promptFeedback.blockReason)', () => {
    it.each(STREAMED)(
      'is an empty answer with finish_reason content_filter on chat completions (stream: %s)',
      async (stream) => {
        const question = `something harmful ${stream}`;
        const answer = await viaChat(
          { model: 'gemini-blocked', messages: [{ role: 'user', content: question }] },
          stream,
        );
        expect(answer).toMatchObject({ text: '', finish: 'content_filter', calls: [] });
        expect(gemini.calls({ model: 'gemini-blocked', containing: question })).toBe(1); // an answer: no retry
      },
    );

    it.each(STREAMED)('is stop_reason refusal on Messages (stream: %s)', async (stream) => {
      const answer = await viaMessages(
        {
          model: 'gemini-blocked',
          max_tokens: 100,
          messages: [{ role: 'user', content: 'something harmful' }],
        },
        stream,
      );
      expect(answer).toMatchObject({ text: '', stopReason: 'refusal', calls: [] });
    });

    it.each(STREAMED)(
      'is an incomplete Response for content_filter on Responses (stream: %s)',
      async (stream) => {
        const answer = await viaResponses({ model: 'gemini-blocked', input: 'something harmful' }, stream);
        expect(answer).toEqual({
          text: '',
          status: 'incomplete',
          incomplete: 'content_filter',
          calls: [],
          refusal: '',
        });
      },
    );
  });

  describe('several tool calls in one answer', () => {
    const tools = ['lookup', 'fetch'].map((name) => ({
      type: 'function' as const,
      function: {
        name,
        description: `The ${name} tool`,
        parameters: { type: 'object', properties: { query: { type: 'string' } }, required: ['query'] },
      },
    }));
    const expected = (question: string) => [
      { name: 'lookup', input: { query: question, call: 1 } },
      { name: 'fetch', input: { query: question, call: 2 } },
    ];
    const distinct = (ids: string[]) => expect(new Set(ids).size).toBe(ids.length);
    /**
     * The ids the vendor made for the one call carrying `question` (OpenAI's and Anthropic's, kept by the
     * stand-in): the gateway relays them unchanged. Gemini's API makes none, so the gateway makes them (checked
     * distinct, in OpenAI's form).
     */
    const madeIds = (family: Family, question: string): unknown[] | undefined => {
      const made = family === 'anthropic' ? anthropic : family === 'openai' ? openai : undefined;
      if (!made) return [1, 2].map(() => expect.stringMatching(/^call_[A-Za-z0-9]{24}$/));
      const sent = made.requests.filter((r) => r.text.includes(question));
      expect(sent).toHaveLength(1);
      return sent[0].toolCallIds;
    };

    describe.each(FAMILIES)('from %s', (family) => {
      it.each(STREAMED)(
        'reach chat completions each with its own id, in order (stream: %s)',
        async (stream) => {
          const question = `both tools ${family} ${stream}`;
          const answer = await viaChat(
            { model: `${family}-parallel`, tools, messages: [{ role: 'user', content: question }] },
            stream,
          );
          expect(answer.finish).toBe('tool_calls');
          expect(
            answer.calls.map((c) => ({ name: c.name, input: JSON.parse(c.arguments) as unknown })),
          ).toEqual(expected(question));
          distinct(answer.calls.map((c) => c.id));
          expect(answer.calls.map((c) => c.id)).toEqual(madeIds(family, question));
        },
      );

      it.each(STREAMED)(
        'reach Messages as tool_use blocks with distinct ids (stream: %s)',
        async (stream) => {
          const question = `both tools on messages ${family} ${stream}`;
          const answer = await viaMessages(
            {
              model: `${family}-parallel`,
              max_tokens: 100,
              tools: tools.map((t) => ({
                name: t.function.name,
                description: t.function.description,
                input_schema: t.function.parameters as Anthropic.Tool.InputSchema,
              })),
              messages: [{ role: 'user', content: question }],
            },
            stream,
          );
          expect(answer.stopReason).toBe('tool_use');
          expect(answer.calls.map(({ name, input }) => ({ name, input }))).toEqual(expected(question));
          distinct(answer.calls.map((c) => c.id));
          expect(answer.calls.map((c) => c.id)).toEqual(madeIds(family, question));
        },
      );

      it.each(STREAMED)(
        'reach Responses as function_call items with distinct call_ids (stream: %s)',
        async (stream) => {
          const question = `both tools on responses ${family} ${stream}`;
          const answer = await viaResponses(
            {
              model: `${family}-parallel`,
              input: question,
              tools: tools.map((t) => ({ type: 'function', strict: false, ...t.function })),
            },
            stream,
          );
          expect(answer.status).toBe('completed');
          expect(
            answer.calls.map((c) => ({ name: c.name, input: JSON.parse(c.arguments) as unknown })),
          ).toEqual(expected(question));
          distinct(answer.calls.map((c) => c.id));
          expect(answer.calls.map((c) => c.id)).toEqual(madeIds(family, question));
        },
      );
    });
  });

  describe("an error after the vendor's 200 (in-band)", () => {
    describe.each(FAMILIES)('from %s', (family) => {
      const upstreamOf = () => ({ openai, anthropic, gemini })[family];

      it("reaches a chat completions stream as OpenAI's in-band error, after the text before it, and is not sent again", async () => {
        const question = `one two three ${family}`;
        const chunks = await chat.chat.completions.create({
          model: `${family}-midstream`,
          stream: true,
          messages: [{ role: 'user', content: question }],
        });
        let text = '';
        const error = await (async () => {
          for await (const chunk of chunks) text += chunk.choices[0]?.delta.content ?? '';
        })().catch((e: unknown) => e);
        expect(error).toBeInstanceOf(OpenAI.APIError);
        expect((error as InstanceType<typeof OpenAI.APIError>).status).toBeUndefined(); // in-band: no status
        expect((error as InstanceType<typeof OpenAI.APIError>).error).toMatchObject({
          type: expect.any(String),
          message: expect.any(String),
        });
        expect(text.startsWith('echo:')).toBe(true);
        // After the first byte nothing is sent again (the plan has two retries left).
        expect(upstreamOf().calls({ containing: question })).toBe(1);
      });

      it("reaches a Messages stream as Anthropic's error event", async () => {
        const error = await messages.messages
          .stream({
            model: `${family}-midstream`,
            max_tokens: 100,
            messages: [{ role: 'user', content: 'one two three' }],
          })
          .finalMessage()
          .catch((e: unknown) => e);
        expect(error).toBeInstanceOf(Anthropic.APIError);
        expect((error as InstanceType<typeof Anthropic.APIError>).error).toMatchObject({
          type: 'error',
          error: { type: expect.any(String), message: expect.any(String) },
        });
      });

      it('reaches a Responses stream as response.failed, then the error event the SDK raises', async () => {
        const events = await chat.responses.create({
          model: `${family}-midstream`,
          input: 'one two three',
          stream: true,
        });
        const types: string[] = [];
        let failed: OpenAI.Responses.Response | undefined;
        const error = await (async () => {
          for await (const event of events) {
            types.push(event.type);
            if (event.type === 'response.failed') failed = event.response;
          }
        })().catch((e: unknown) => e);
        expect(error).toBeInstanceOf(OpenAI.APIError);
        expect(types).not.toContain('response.completed');
        expect(failed).toMatchObject({ status: 'failed', error: { code: expect.any(String) } });
      });
    });
  });

  describe("OpenAI's Responses API refusing and calling several tools (a backend that speaks it: passed through)", () => {
    const refusal = "I'm sorry, I can't help with that.";
    const tools = ['lookup', 'fetch'].map((name) => ({
      type: 'function' as const,
      name,
      strict: false,
      parameters: { type: 'object', properties: { query: { type: 'string' } }, required: ['query'] },
    }));

    it.each(STREAMED)(
      'a refusal is a refusal content part, the response completed (stream: %s)',
      async (stream) => {
        const question = `refuse natively ${stream}`;
        const answer = await viaResponses({ model: 'native-refuser', input: question }, stream);
        expect(answer).toEqual({ text: '', refusal, status: 'completed', incomplete: null, calls: [] });
        expect(openai.calls({ path: '/v1/responses', model: 'refuser', containing: question })).toBe(1);
      },
    );

    it('streamed, the refusal arrives as it is written: response.refusal.delta events, then .done', async () => {
      const events = await chat.responses.create({
        model: 'native-refuser',
        input: 'refuse in events',
        stream: true,
      });
      let deltas = '';
      const done: string[] = [];
      for await (const event of events) {
        if (event.type === 'response.refusal.delta') deltas += event.delta;
        if (event.type === 'response.refusal.done') done.push(event.refusal);
      }
      expect(deltas).toBe(refusal);
      expect(done).toEqual([refusal]);
    });

    it.each(STREAMED)(
      'several function calls arrive with the call_ids the backend made, distinct, and are accounted from its usage (stream: %s)',
      async (stream) => {
        const team = `native-parallel-${stream}`;
        const { token } = await gw.teamToken(team);
        const client = gw.openai(token);
        const question = `both tools natively ${stream}`;
        let response: OpenAI.Responses.Response | undefined;
        if (stream) {
          for await (const event of await client.responses.create({
            model: 'native-parallel',
            input: question,
            tools,
            stream: true,
          }))
            if (event.type === 'response.completed') response = event.response;
        } else response = await client.responses.create({ model: 'native-parallel', input: question, tools });
        const calls = (response?.output ?? []).flatMap((item) =>
          item.type === 'function_call' ? [item] : [],
        );
        const args = [1, 2].map((call) => ({ query: question, call }));
        expect(calls.map((c) => ({ name: c.name, input: JSON.parse(c.arguments) as unknown }))).toEqual([
          { name: 'lookup', input: args[0] },
          { name: 'fetch', input: args[1] },
        ]);
        const sent = openai.requests.filter((r) => r.path === '/v1/responses' && r.text.includes(question));
        expect(sent).toHaveLength(1);
        const ids = calls.map((c) => c.call_id);
        expect(ids).toEqual(sent[0].toolCallIds);
        expect(new Set([...ids, ...calls.map((c) => c.id)]).size).toBe(4);
        // The stand-in counts a word a token: the question in, each call's arguments out.
        expect(await waitForUsageRecord(gw, team)).toMatchObject({
          endpoint: 'responses',
          outcome: 'ok',
          estimated: false,
          prompt_tokens: words(question),
          completion_tokens: words(JSON.stringify(args[0])) + words(JSON.stringify(args[1])),
        });
      },
    );

    it("the next turn answers each call by its id, replayed from the gateway's store (the backend keeps nothing)", async () => {
      const question = 'both tools then their results';
      const first = await chat.responses.create({ model: 'native-parallel', input: question, tools });
      const calls = first.output.flatMap((item) => (item.type === 'function_call' ? [item] : []));
      expect(calls).toHaveLength(2);
      const second = await chat.responses.create({
        model: 'native-parallel',
        previous_response_id: first.id,
        tools,
        input: calls.map((call, i) => ({
          type: 'function_call_output' as const,
          call_id: call.call_id,
          output: `result ${i + 1}`,
        })),
      });
      // The stand-in refuses an output whose call it was not shown: both calls went back with their ids.
      expect(second.output_text).toBe('tool said: result 2');
      const replayed = openai.requests.filter((r) => r.path === '/v1/responses' && r.text.includes(question));
      expect(replayed).toHaveLength(2);
      const input = replayed[1].body.input as Array<Record<string, unknown>>;
      expect(input.filter((item) => item.type === 'function_call').map((item) => item.call_id)).toEqual(
        replayed[0].toolCallIds,
      );
    });
  });

  describe('a 200 whose body is an error', () => {
    /** A client of its own team, so the test can read back exactly its request's one usage record. */
    async function clientsOf(team: string) {
      const { token } = await gw.teamToken(team);
      return {
        chat: gw.openai(token),
        messages: new Anthropic({ apiKey: token, baseURL: gw.url, maxRetries: 0 }),
      };
    }
    const vendorSaid = 'Provider returned error';

    it("an OpenAI-compatible backend's in-body error is OpenAI's error on chat completions, called once, one record", async () => {
      const { chat: client } = await clientsOf('error-body-chat');
      const question = 'in-body error on chat';
      const error = await client.chat.completions
        .create({ model: 'openai-error-body', messages: [{ role: 'user', content: question }] })
        .catch((e: unknown) => e);
      expect(error).toBeInstanceOf(OpenAI.InternalServerError);
      expect((error as InstanceType<typeof OpenAI.APIError>).status).toBe(502);
      expect((error as InstanceType<typeof OpenAI.APIError>).error).toMatchObject({
        type: 'server_error',
        code: 'upstream_error',
        message: expect.stringContaining(vendorSaid),
      });
      expect(openai.calls({ model: 'error-body', containing: question })).toBe(1);
      expect(await waitForUsageRecord(gw, 'error-body-chat')).toMatchObject({
        outcome: 'error',
        status: 502,
        error_code: 'upstream_error',
        backend: 'standin',
        prompt_tokens: 0,
        completion_tokens: 0,
      });
    });

    it('streamed, as the first event, is an error on the chat completions stream, called once, one record', async () => {
      const { chat: client } = await clientsOf('error-body-chat-stream');
      const question = 'in-body error on a chat stream';
      const error = await (async () => {
        const chunks = await client.chat.completions.create({
          model: 'openai-error-body',
          stream: true,
          messages: [{ role: 'user', content: question }],
        });
        for await (const chunk of chunks) void chunk;
      })().catch((e: unknown) => e);
      expect(error).toBeInstanceOf(OpenAI.APIError);
      expect((error as InstanceType<typeof OpenAI.APIError>).status).toBeUndefined(); // in-band, after the 200
      expect((error as InstanceType<typeof OpenAI.APIError>).error).toMatchObject({
        type: 'server_error',
        code: 'upstream_error',
        message: expect.stringContaining(vendorSaid),
      });
      expect(openai.calls({ model: 'error-body', containing: question })).toBe(1);
      expect(await waitForUsageRecord(gw, 'error-body-chat-stream')).toMatchObject({
        outcome: 'error',
        status: 200,
        stream: true,
        error_code: 'upstream_error',
        completion_tokens: 0,
      });
    });

    it("is Anthropic's error on Messages (api_error, the vendor's words), one record", async () => {
      const { messages: client } = await clientsOf('error-body-messages');
      const question = 'in-body error on messages';
      const error = await client.messages
        .create({
          model: 'openai-error-body',
          max_tokens: 50,
          messages: [{ role: 'user', content: question }],
        })
        .catch((e: unknown) => e);
      expect(error).toBeInstanceOf(Anthropic.InternalServerError);
      expect((error as InstanceType<typeof Anthropic.APIError>).status).toBe(502);
      expect((error as InstanceType<typeof Anthropic.APIError>).error).toMatchObject({
        type: 'error',
        error: { type: 'api_error', message: expect.stringContaining(vendorSaid) },
      });
      expect(openai.calls({ model: 'error-body', containing: question })).toBe(1);
      expect(await waitForUsageRecord(gw, 'error-body-messages')).toMatchObject({
        outcome: 'error',
        status: 502,
        endpoint: 'messages',
      });
    });

    it("is OpenAI's error on Responses (translated), one record", async () => {
      const { chat: client } = await clientsOf('error-body-responses');
      const question = 'in-body error on responses';
      const error = await client.responses
        .create({ model: 'openai-error-body', input: question })
        .catch((e: unknown) => e);
      expect(error).toBeInstanceOf(OpenAI.InternalServerError);
      expect((error as InstanceType<typeof OpenAI.APIError>).error).toMatchObject({
        code: 'upstream_error',
        message: expect.stringContaining(vendorSaid),
      });
      expect(openai.calls({ model: 'error-body', containing: question })).toBe(1);
      expect(await waitForUsageRecord(gw, 'error-body-responses')).toMatchObject({
        outcome: 'error',
        status: 502,
      });
    });

    it("a Response OpenAI failed (200, status failed) is OpenAI's error with the vendor's code on Responses, one record", async () => {
      const { chat: client } = await clientsOf('failed-response');
      const question = 'a response that fails';
      const error = await client.responses
        .create({ model: 'native-failer', input: question })
        .catch((e: unknown) => e);
      expect(error).toBeInstanceOf(OpenAI.InternalServerError);
      expect((error as InstanceType<typeof OpenAI.APIError>).status).toBe(502);
      expect((error as InstanceType<typeof OpenAI.APIError>).error).toMatchObject({
        code: 'server_error',
        message: expect.stringContaining('The server had an error while processing your request.'),
      });
      expect(openai.calls({ path: '/v1/responses', model: 'failer', containing: question })).toBe(1);
      expect(await waitForUsageRecord(gw, 'failed-response')).toMatchObject({
        outcome: 'error',
        status: 502,
        error_code: 'server_error',
        prompt_tokens: 0,
        completion_tokens: 0,
      });
    });

    it("streamed, the failed Response reaches a Responses client as response.failed with the vendor's code and words, one record", async () => {
      const { chat: client } = await clientsOf('failed-response-stream');
      const events = await client.responses.create({
        model: 'native-failer',
        input: 'a streamed response that fails',
        stream: true,
      });
      const types: string[] = [];
      let failed: OpenAI.Responses.Response | undefined;
      await (async () => {
        for await (const event of events) {
          types.push(event.type);
          if (event.type === 'response.failed') failed = event.response;
        }
      })().catch((e: unknown) => e);
      expect(types).toEqual(['response.created', 'response.in_progress', 'response.failed']);
      expect(failed).toMatchObject({
        status: 'failed',
        model: 'native-failer',
        error: {
          code: 'server_error',
          message: expect.stringContaining('The server had an error while processing your request.'),
        },
      });
      expect(await waitForUsageRecord(gw, 'failed-response-stream')).toMatchObject({
        outcome: 'error',
        status: 200,
        error_code: 'server_error',
      });
    });
  });

  describe('members a vendor does not define', () => {
    // What OpenAI's strict tools and Claude Code's tools carry: JSON Schema beyond Gemini's `parameters` subset.
    const jsonSchema = {
      $schema: 'http://json-schema.org/draft-07/schema#',
      type: 'object',
      properties: { query: { type: 'string', const: 'x' } },
      required: ['query'],
      additionalProperties: false,
    };

    it.each(['anthropic', 'gemini'] as const)(
      'OpenAI-only chat members never reach %s: the answer comes, and the vendor saw only its own members',
      async (family) => {
        const question = `only known members ${family}`;
        const answer = await viaChat(
          {
            model: `${family}-echo`,
            messages: [{ role: 'user', content: question }],
            seed: 7,
            logprobs: false,
            frequency_penalty: 0,
            presence_penalty: 0,
            service_tier: 'auto',
            store: false,
            metadata: { purpose: 'test' },
            user: 'someone',
            prompt_cache_key: 'k',
            safety_identifier: 's',
            parallel_tool_calls: true,
            stream_options: undefined,
            an_extension_nobody_defines: { on: true },
          },
          false,
        );
        expect(answer).toMatchObject({ text: `echo: ${question}`, finish: 'stop' });
        expect({ anthropic, gemini }[family].calls({ containing: question })).toBe(1);
      },
    );

    it.each(STREAMED)(
      "a tool's JSON Schema reaches Gemini where Gemini takes JSON Schema (chat, stream: %s)",
      async (stream) => {
        const question = `json schema tool ${stream}`;
        const answer = await viaChat(
          {
            model: 'gemini-parallel',
            tools: [{ type: 'function', function: { name: 'lookup', parameters: jsonSchema } }],
            messages: [{ role: 'user', content: question }],
          },
          stream,
        );
        expect(answer.finish).toBe('tool_calls');
        const sent = gemini.requests.filter((r) => r.text.includes(question));
        expect(sent).toHaveLength(1);
        expect(sent[0].body.tools[0].functionDeclarations[0].parametersJsonSchema).toEqual(jsonSchema);
      },
    );

    it("Claude Code's tool schemas reach Gemini from a Messages client", async () => {
      const question = 'claude code tool via gemini';
      const answer = await viaMessages(
        {
          model: 'gemini-parallel',
          max_tokens: 100,
          tools: [{ name: 'Read', description: 'Read a file', input_schema: jsonSchema as never }],
          messages: [{ role: 'user', content: question }],
        },
        true,
      );
      expect(answer.stopReason).toBe('tool_use');
      expect(gemini.calls({ containing: question })).toBe(1);
    });

    it("a Messages member Anthropic does not define gets Anthropic's own 400, from one call (never retried)", async () => {
      const question = 'an unknown member to anthropic';
      const error = await messages.messages
        .create({
          model: 'anthropic-echo',
          max_tokens: 100,
          messages: [{ role: 'user', content: question }],
          not_an_anthropic_member: true,
        } as Anthropic.MessageCreateParamsNonStreaming)
        .catch((e: unknown) => e);
      expect(error).toBeInstanceOf(Anthropic.BadRequestError);
      expect((error as InstanceType<typeof Anthropic.APIError>).error).toMatchObject({
        type: 'error',
        error: {
          type: 'invalid_request_error',
          message: 'not_an_anthropic_member: Extra inputs are not permitted',
        },
      });
      expect(anthropic.calls({ containing: question })).toBe(1);
    });

    it.each(FAMILIES)('Responses-only members never reach %s', async (family) => {
      const question = `responses members ${family}`;
      const answer = await viaResponses(
        {
          model: `${family}-echo`,
          input: question,
          instructions: 'Be brief.',
          store: false,
          include: ['reasoning.encrypted_content'],
          text: { format: { type: 'text' }, verbosity: 'low' },
          reasoning: { effort: 'low', summary: 'auto' },
          truncation: 'disabled',
          background: false,
          service_tier: 'auto',
          top_logprobs: 0,
          metadata: { purpose: 'test' },
          prompt_cache_key: 'k',
          safety_identifier: 's',
          parallel_tool_calls: true,
          user: 'someone',
        },
        false,
      );
      expect(answer).toMatchObject({ text: `echo: ${question}`, status: 'completed' });
      expect({ openai, anthropic, gemini }[family].calls({ containing: question })).toBe(1);
    });

    it.each(['openai', 'gemini'] as const)('Messages-only members never reach %s', async (family) => {
      const question = `messages members ${family}`;
      const answer = await viaMessages(
        {
          model: `${family}-echo`,
          max_tokens: 100,
          messages: [{ role: 'user', content: question }],
          system: [{ type: 'text', text: 'Be brief.', cache_control: { type: 'ephemeral' } }],
          metadata: { user_id: 'someone' },
          stop_sequences: ['NEVER'],
          temperature: 0.5,
          top_k: 5,
          top_p: 0.9,
          service_tier: 'auto',
          tool_choice: { type: 'auto', disable_parallel_tool_use: true },
          tools: [{ name: 'lookup', input_schema: { type: 'object' }, cache_control: { type: 'ephemeral' } }],
          output_config: { effort: 'low' },
          context_management: { edits: [] },
        } as Anthropic.MessageCreateParamsNonStreaming,
        false,
      );
      expect(answer.stopReason).toBe(family === 'gemini' ? 'tool_use' : 'end_turn');
      expect({ openai, gemini }[family].calls({ containing: question })).toBe(1);
    });

    it.each(STREAMED)(
      "the gateway's own chat member (thinking) never reaches OpenAI, which would refuse it (stream: %s)",
      async (stream) => {
        const question = `the gateway's thinking to openai ${stream}`;
        const answer = await viaChat(
          {
            model: 'openai-echo',
            messages: [{ role: 'user', content: question }],
            thinking: { type: 'disabled' },
          },
          stream,
        );
        expect(answer).toMatchObject({ text: `echo: ${question}`, finish: 'stop' });
        expect(openai.calls({ path: '/v1/chat/completions', containing: question })).toBe(1);
      },
    );

    it.each(STREAMED)(
      "a chat member OpenAI does not define goes to an OpenAI backend as the client sent it, and OpenAI's 400 comes back, called once (stream: %s)",
      async (stream) => {
        const question = `an unknown member to openai ${stream}`;
        const error = await viaChat(
          {
            model: 'openai-echo',
            messages: [{ role: 'user', content: question }],
            an_extension_nobody_defines: true,
            top_k: 3,
          },
          stream,
        ).catch((e: unknown) => e);
        expect(error).toBeInstanceOf(OpenAI.BadRequestError);
        expect((error as InstanceType<typeof OpenAI.APIError>).error).toEqual({
          message: 'Unrecognized request arguments supplied: an_extension_nobody_defines, top_k',
          type: 'invalid_request_error',
          param: null,
          code: null,
        });
        expect(openai.calls({ path: '/v1/chat/completions', containing: question })).toBe(1);
      },
    );
  });

  describe('upstream calls counted on the stand-ins', () => {
    it.each(STREAMED)(
      'an Anthropic 529 before the first byte is called 1 + retries times, then the client gets 503 (stream: %s)',
      async (stream) => {
        const question = `overloaded ${stream}`;
        const error = await viaChat(
          { model: 'anthropic-overloaded', messages: [{ role: 'user', content: question }] },
          stream,
        ).catch((e: unknown) => e);
        expect(error).toBeInstanceOf(OpenAI.APIError);
        expect((error as InstanceType<typeof OpenAI.APIError>).status).toBe(503);
        expect(
          anthropic.calls({ path: '/v1/messages', model: 'claude-overloaded', containing: question }),
        ).toBe(3);
      },
    );

    it.each(STREAMED)(
      'so is a Messages request, which goes to Anthropic as it came (stream: %s)',
      async (stream) => {
        const question = `overloaded messages ${stream}`;
        const error = await viaMessages(
          { model: 'anthropic-overloaded', max_tokens: 100, messages: [{ role: 'user', content: question }] },
          stream,
        ).catch((e: unknown) => e);
        expect(error).toBeInstanceOf(Anthropic.APIError);
        expect((error as InstanceType<typeof Anthropic.APIError>).status).toBe(503);
        expect(
          anthropic.calls({ path: '/v1/messages', model: 'claude-overloaded', containing: question }),
        ).toBe(3);
      },
    );

    it.each(STREAMED)('and a Responses request (stream: %s)', async (stream) => {
      const question = `overloaded responses ${stream}`;
      const error = await viaResponses({ model: 'anthropic-overloaded', input: question }, stream).catch(
        (e: unknown) => e,
      );
      expect(error).toBeInstanceOf(OpenAI.APIError);
      expect((error as InstanceType<typeof OpenAI.APIError>).status).toBe(503);
      expect(
        anthropic.calls({ path: '/v1/messages', model: 'claude-overloaded', containing: question }),
      ).toBe(3);
    });

    it('a Gemini stream is one call to its streaming path, a plain answer one to generateContent', async () => {
      const question = 'count the paths';
      await viaChat({ model: 'gemini-echo', messages: [{ role: 'user', content: question }] }, true);
      await viaChat({ model: 'gemini-echo', messages: [{ role: 'user', content: question }] }, false);
      const counted = (path: string) => gemini.calls({ path, model: 'gemini-echo', containing: question });
      expect(counted('/v1beta/models/gemini-echo:streamGenerateContent')).toBe(1);
      expect(counted('/v1beta/models/gemini-echo:generateContent')).toBe(1);
    });
  });
});
