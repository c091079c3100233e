import { BackendConfig } from '../../src/config/config.schema';
import { GatewayException } from '../../src/core/errors/gateway.exception';
import { AnthropicAdapter } from '../../src/providers/anthropic/anthropic.adapter';
import { AnthropicBackendConfig } from '../../src/providers/anthropic/anthropic.config';
import { GeminiAdapter } from '../../src/providers/gemini/gemini.adapter';
import { OpenAIAdapter } from '../../src/providers/openai/openai.adapter';
import { LocalAdapter } from '../../src/providers/local/local.adapter';
import { LocalAnswer } from '../../src/providers/local/local-answer';
import { LocalReply, usageOf } from '../../src/providers/local/local-reply';
import { AbortedWithUsage } from '../../src/providers/upstream-client';
import { OpenAiChunkEncoder } from '../../src/endpoints/chat-completions/openai-chunk-encoder';
import { bodyOf, decodeAll, sseText } from '../support/stream-decoding';

/**
 * Each family decodes its own stream (ProviderAdapter.decodeStream): bytes as the socket delivers them -> batches
 * of canonical steps. These check the decoders against the upstreams' documented wire formats, read the way TCP
 * delivers them (events split anywhere, several in one read).
 */
const backend = Object.assign(new BackendConfig(), { type: 'openai', baseUrl: 'http://x.invalid/v1' });
const request = { model: 'm', messages: [{ role: 'user' as const, content: 'hi' }] };

const chunk = (content: string, finish: string | null = null) =>
  JSON.stringify({
    id: 'chatcmpl-1',
    object: 'chat.completion.chunk',
    created: 1,
    model: 'gpt-4o',
    choices: [{ index: 0, delta: content ? { content } : {}, finish_reason: finish }],
  });

/** `text` cut into reads at the given byte offsets (a multi-byte character may be cut in two). */
function splitAt(text: string, offsets: number[]): Uint8Array[] {
  const bytes = Buffer.from(text, 'utf8');
  const cuts = [0, ...offsets, bytes.length];
  return cuts.slice(1).map((end, i) => new Uint8Array(bytes.subarray(cuts[i], end)));
}

describe('the SSE decoder (OpenAI-compatible chunks)', () => {
  const adapter = new OpenAIAdapter('b', backend);
  const events = ['Grüße ', 'über ', '€ und 🙂'].map((text) => ({ data: chunk(text) }));
  const wire = sseText([...events, { data: chunk('', 'stop') }, { data: '[DONE]' }]);

  it('reads the same steps whatever the reads are cut at, inside JSON, a line break or a UTF-8 character', async () => {
    const whole = await decodeAll(adapter, bodyOf([wire]), { request });
    const text = (steps: typeof whole.steps) =>
      steps.flatMap((step) => step.chunks.map((c) => c.choices[0]?.delta?.content ?? '')).join('');
    expect(text(whole.steps)).toBe('Grüße über € und 🙂');
    expect(whole.steps.at(-1)?.done).toBe(true);
    const bytes = Buffer.byteLength(wire);
    const euro = Buffer.from(wire).indexOf(Buffer.from('€')) + 1; // inside the euro sign's three bytes
    const emoji = Buffer.from(wire).indexOf(Buffer.from('🙂')) + 2;
    const cutPoints = [[euro], [emoji], [euro, emoji], [wire.indexOf('\n\n') + 1], [7, 50, 51, bytes - 3]];
    for (const cuts of cutPoints) {
      const split = await decodeAll(adapter, bodyOf(splitAt(wire, cuts)), { request });
      expect(split.error).toBeUndefined();
      expect(text(split.steps)).toBe(text(whole.steps));
      expect(split.steps.map((step) => step.upstream?.data)).toEqual(
        whole.steps.map((step) => step.upstream?.data),
      );
    }
  });

  it('yields the events of each read together (one batch per read), never an empty batch', async () => {
    const [first, second] = [sseText(events.slice(0, 2)), sseText(events.slice(2))];
    const half = Math.floor(second.length / 2);
    const { batches } = await decodeAll(
      adapter,
      bodyOf([first, second.slice(0, half), second.slice(half), sseText([{ data: '[DONE]' }])]),
      { request },
    );
    // The read holding only half an event completes nothing: no batch for it.
    expect(batches.map((batch) => batch.length)).toEqual([2, 1, 1]);
  });

  it('stops at [DONE]: what follows is read but not decoded', async () => {
    const { steps, error } = await decodeAll(
      adapter,
      bodyOf([sseText([events[0], { data: '[DONE]' }]), 'data: not json\n\n']),
      { request },
    );
    expect(error).toBeUndefined();
    expect(steps).toHaveLength(2);
    expect(steps[1].done).toBe(true);
  });

  it('hands over the steps before an in-band error, then throws it', async () => {
    const { batches, error } = await decodeAll(
      adapter,
      bodyOf([
        sseText([events[0], events[1], { data: '{"error":{"message":"boom","type":"server_error"}}' }]),
      ]),
      { request },
    );
    expect(batches.map((batch) => batch.length)).toEqual([2]);
    expect(error).toBeInstanceOf(GatewayException);
  });

  it('reads a native Responses stream with the Responses mapper, keeping each upstream event', async () => {
    const responses = new OpenAIAdapter(
      'b',
      Object.assign(new BackendConfig(), { ...backend, responsesApi: true }),
    );
    const delta = { type: 'response.output_text.delta', delta: 'hi', output_index: 0 };
    const { steps } = await decodeAll(
      responses,
      bodyOf([sseText([{ event: 'response.output_text.delta', data: JSON.stringify(delta) }])]),
      { request, native: 'responses' },
    );
    expect(steps[0].chunks[0].choices[0].delta).toEqual({ content: 'hi' });
    expect(steps[0].upstream).toMatchObject({
      event: 'response.output_text.delta',
      data: JSON.stringify(delta),
    });
  });
});

describe("Anthropic's decoder", () => {
  const adapter = new AnthropicAdapter(
    'b',
    Object.assign(new AnthropicBackendConfig(), { type: 'anthropic', baseUrl: 'http://x.invalid/v1' }),
  );
  const messageStart = {
    type: 'message_start',
    message: { id: 'msg_1', model: 'claude-x', usage: { input_tokens: 5, output_tokens: 1 } },
  };
  const stream = [
    { event: 'message_start', data: JSON.stringify(messageStart) },
    { event: 'ping', data: '{"type": "ping"}' },
    {
      event: 'content_block_start',
      data: '{"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}',
    },
    {
      event: 'content_block_delta',
      data: '{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"Hi"}}',
    },
    { event: 'content_block_stop', data: '{"type":"content_block_stop","index":0}' },
    {
      event: 'message_delta',
      data: '{"type":"message_delta","delta":{"stop_reason":"end_turn"},"usage":{"output_tokens":3}}',
    },
    { event: 'message_stop', data: '{"type":"message_stop"}' },
  ];

  it('maps named events to chunks and keeps every event as it came for native pass-through', async () => {
    const { steps, error } = await decodeAll(adapter, bodyOf([sseText(stream)]), {
      request,
      native: 'messages',
    });
    expect(error).toBeUndefined();
    // Every event, the ping with its own spacing included, is handed over unchanged (name and data).
    expect(steps.map((step) => step.upstream)).toEqual(stream.map((e) => ({ ...e, id: undefined })));
    const deltas = steps
      .flatMap((step) => step.chunks)
      .flatMap((c) => c.choices.map((choice) => choice.delta));
    expect(deltas).toContainEqual({ content: 'Hi' });
    expect(steps.at(-1)).toMatchObject({ done: true });
    expect(steps.at(-1)?.chunks[0].usage).toMatchObject({
      prompt_tokens: 5,
      completion_tokens: 3,
      total_tokens: 8,
    });
  });

  it("throws an `event: error` as the gateway's error for its type, after the events before it", async () => {
    const overloaded = {
      event: 'error',
      data: '{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}',
    };
    const { batches, error } = await decodeAll(
      adapter,
      bodyOf([sseText([stream[0], stream[2], overloaded])]),
      {
        request,
      },
    );
    expect(batches.flat()).toHaveLength(2);
    expect((error as GatewayException).code).toBe('upstream_unavailable');
  });
});

describe("Gemini's decoder (no end marker)", () => {
  const adapter = new GeminiAdapter(
    'b',
    Object.assign(new BackendConfig(), { type: 'gemini', baseUrl: 'http://x.invalid/v1beta' }),
  );
  const event = (candidates: unknown[], usage?: unknown) => ({
    data: JSON.stringify({
      candidates,
      modelVersion: 'gemini-x',
      ...(usage ? { usageMetadata: usage } : {}),
    }),
  });
  const text = (index: number, t: string, finishReason?: string) => ({
    index,
    content: { role: 'model', parts: [{ text: t }] },
    ...(finishReason ? { finishReason } : {}),
  });
  const usage = { promptTokenCount: 4, candidatesTokenCount: 6, totalTokenCount: 10 };

  it('ends at the event where every candidate has finished, with the usage chunk', async () => {
    const { steps } = await decodeAll(
      adapter,
      bodyOf([
        sseText([
          event([text(0, 'a'), text(1, 'b')]),
          event([text(0, '', 'STOP'), text(1, 'c', 'STOP')], usage),
        ]),
      ]),
      { request: { ...request, n: 2 } },
    );
    expect(steps).toHaveLength(2);
    expect(steps[1].done).toBe(true);
    expect(steps[1].chunks.at(-1)?.usage).toMatchObject({
      prompt_tokens: 4,
      completion_tokens: 6,
      total_tokens: 10,
    });
  });

  it('ends a body that closed with some candidates unfinished with the last usage, as a step of its own', async () => {
    const { batches } = await decodeAll(
      adapter,
      bodyOf([sseText([event([text(0, 'a', 'STOP'), text(1, 'b')], usage)])]),
      { request: { ...request, n: 2 } },
    );
    expect(batches).toHaveLength(2);
    expect(batches[1]).toHaveLength(1);
    expect(batches[1][0]).toMatchObject({
      done: true,
      chunks: [{ choices: [], usage: { total_tokens: 10 } }],
    });
  });

  it('adds nothing when the body closed before any candidate finished (a cut stream, for the relay to report)', async () => {
    const { steps } = await decodeAll(adapter, bodyOf([sseText([event([text(0, 'a')], usage)])]), {
      request,
    });
    expect(steps).toHaveLength(1);
    expect(steps.some((step) => step.done)).toBe(false);
  });
});

describe("the local family's decoder (the worker's messages, no text in between)", () => {
  const adapter = new LocalAdapter('local', Object.assign(new BackendConfig(), { type: 'local' }), 'local');
  const stream = (answer: LocalAnswer) => decodeAll(adapter, answer, { request });

  it('hands over the chunks the reply made, the steps reported since the last read as one batch', async () => {
    const answer = new LocalAnswer();
    const reply = new LocalReply(answer, true, 'smollm2');
    reply.onThought('hmm');
    reply.onText('Hi');
    const decoded = stream(answer);
    await new Promise((resolve) => setImmediate(resolve)); // the relay has read the first batch and waits
    reply.onText(' there');
    reply.finish('stop', usageOf(3, 2, 1));
    const { batches, error } = await decoded;
    expect(error).toBeUndefined();
    expect(batches.map((batch) => batch.length)).toEqual([3, 3]);
    const steps = batches.flat();
    expect(steps.map((step) => step.chunks[0].choices[0]?.delta)).toEqual([
      { role: 'assistant', content: '' },
      { reasoning_content: 'hmm' },
      { content: 'Hi' },
      { content: ' there' },
      {},
      undefined,
    ]);
    expect(steps.at(-1)).toMatchObject({ done: true, chunks: [{ choices: [], usage: { total_tokens: 5 } }] });
  });

  it('writes, through the OpenAI encoder, the bytes the old SSE reply gave the client', async () => {
    const answer = new LocalAnswer();
    const reply = new LocalReply(answer, true, 'smollm2');
    reply.onText('a "quoted" word');
    reply.onCallStart(0, 'Read');
    reply.finish('tool_calls', usageOf(3, 2, 1, 1));
    const { steps } = await stream(answer);
    const encoder = new OpenAiChunkEncoder('team-model', true);
    const written = steps.map((step) => encoder.event({ data: '' }, step)).join('');
    // What LocalReply wrote before (JSON.stringify of the same chunk with the worker's model name), renamed by the
    // encoder; usage in the canonical member order.
    const base = `"id":"${reply.id}","created":${reply.created},"model":"team-model","object":"chat.completion.chunk"`;
    const callId = (steps[2].chunks[0].choices[0].delta.tool_calls as Array<{ id: string }>)[0].id;
    expect(written).toBe(
      [
        `{${base},"choices":[{"index":0,"delta":{"role":"assistant","content":""},"finish_reason":null}]}`,
        `{${base},"choices":[{"index":0,"delta":{"content":"a \\"quoted\\" word"},"finish_reason":null}]}`,
        `{${base},"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"id":"${callId}","type":"function","function":{"name":"Read","arguments":""}}]},"finish_reason":null}]}`,
        `{${base},"choices":[{"index":0,"delta":{},"finish_reason":"tool_calls"}]}`,
        `{${base},"choices":[],"usage":{"prompt_tokens":3,"completion_tokens":2,"total_tokens":5,"prompt_tokens_details":{"cached_tokens":1},"completion_tokens_details":{"reasoning_tokens":1}}}`,
      ]
        .map((json) => `data: ${json}\n\n`)
        .join(''),
    );
  });

  it('ends with what the worker reported an abandoned request spent, after the steps before it', async () => {
    const answer = new LocalAnswer();
    const reply = new LocalReply(answer, true, 'smollm2');
    reply.onText('Hi');
    answer.fail(new AbortedWithUsage(usageOf(3, 1, 0)));
    const { steps, error } = await stream(answer);
    expect(steps).toHaveLength(2);
    expect(error).toBeInstanceOf(AbortedWithUsage);
    expect((error as AbortedWithUsage).usage).toMatchObject({ prompt_tokens: 3, completion_tokens: 1 });
  });

  it('answers a whole request with the completion object itself (no JSON text)', async () => {
    const answer = new LocalAnswer();
    const reply = new LocalReply(answer, false, 'smollm2');
    reply.onText('Hi');
    reply.finish('stop', usageOf(3, 1, 0));
    const whole = (await answer.json()) as { choices: Array<{ message: unknown }> };
    expect(whole.choices[0].message).toMatchObject({ role: 'assistant', content: 'Hi' });
    expect(await answer.json()).toBe(whole);
  });
});
