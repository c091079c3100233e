import { OpenAIAdapter } from '../../src/providers/openai/openai.adapter';
import { BackendConfig, ModelConfig } from '../../src/config/config.schema';
import type { ChatCompletionRequestDto } from '../../src/endpoints/chat-completions/dto/chat-completion-request.dto';
import { GatewayException } from '../../src/core/errors/gateway.exception';

const backend = Object.assign(new BackendConfig(), {
  type: 'openai',
  baseUrl: 'http://u/v1',
  apiKey: 'sk-up',
  headers: { 'openai-organization': 'org-1' },
});
const adapter = new OpenAIAdapter('b', backend);
const target = {
  upstreamModel: 'gpt-4o-2024-08-06',
  model: Object.assign(new ModelConfig(), { backend: 'b', upstreamModel: 'gpt-4o-2024-08-06' }),
};
const request = (extra: Record<string, unknown> = {}) =>
  ({
    model: 'gpt-4o',
    messages: [{ role: 'user', content: 'hi' }],
    ...extra,
  }) as unknown as ChatCompletionRequestDto;

describe('OpenAI adapter', () => {
  it('forwards unknown fields, swaps in the upstream model, and drops gateway-only fields', () => {
    const call = adapter.buildRequest(
      request({ seed: 1, tools: [], thinking: { type: 'disabled' }, stream: false }),
      target,
      false,
    );
    expect(call.path).toBe('/chat/completions');
    expect(JSON.parse(call.body.toString())).toEqual({
      model: 'gpt-4o-2024-08-06',
      messages: [{ role: 'user', content: 'hi' }],
      seed: 1,
      tools: [],
    });
    expect(call.headers).toEqual({
      'content-type': 'application/json',
      accept: 'application/json',
      authorization: 'Bearer sk-up',
      'openai-organization': 'org-1',
    });
  });

  it('always asks a stream for usage, keeping other stream options', () => {
    const call = adapter.buildRequest(
      request({ stream: true, stream_options: { include_obfuscation: false } }),
      target,
      true,
    );
    expect(JSON.parse(call.body.toString())).toMatchObject({
      stream: true,
      stream_options: { include_obfuscation: false, include_usage: true },
    });
    expect(call.headers.accept).toBe('text/event-stream');
  });

  it('normalises usage so total = prompt + completion', () => {
    const reply = adapter.parseResponse({
      id: 'x',
      choices: [],
      usage: { prompt_tokens: 3, completion_tokens: 4, total_tokens: 99 },
    });
    expect(reply.usage).toEqual({ prompt_tokens: 3, completion_tokens: 4, total_tokens: 7 });
    expect(() => adapter.parseResponse({ nope: true })).toThrow(GatewayException);
  });

  it('maps stream events: chunks, [DONE], and an in-band error', () => {
    const mapper = adapter.chunkMapper();
    const chunk = {
      id: 'c',
      object: 'chat.completion.chunk',
      created: 1,
      model: 'm',
      choices: [{ index: 0, delta: { content: 'x' }, finish_reason: null }],
    };
    expect(mapper.map({ data: JSON.stringify(chunk), event: undefined, id: undefined }).chunks).toEqual([
      chunk,
    ]);
    expect(mapper.map({ data: '[DONE]', event: undefined, id: undefined })).toEqual({
      chunks: [],
      done: true,
    });
    expect(() =>
      mapper.map({
        data: '{"error":{"message":"boom","type":"server_error"}}',
        event: undefined,
        id: undefined,
      }),
    ).toThrow(GatewayException);
    expect(() => mapper.map({ data: 'not json', event: undefined, id: undefined })).toThrow(
      /malformed stream event/,
    );
    // An error event naming its status (OpenRouter's, vLLM's numeric code) is the error that status stands for.
    const inBand = (data: string) => {
      try {
        adapter.chunkMapper().map({ data, event: undefined, id: undefined });
      } catch (thrown) {
        return thrown as GatewayException;
      }
      throw new Error('no error thrown');
    };
    expect(inBand('{"error":{"code":503,"message":"busy"}}')).toMatchObject({
      code: 'upstream_unavailable',
      status: 503,
    });
    expect(inBand('{"error":{"message":"boom","type":"server_error","code":"server_error"}}')).toMatchObject({
      code: 'upstream_error',
      message: 'Backend "b" failed with HTTP 500: boom',
    });
  });

  it('offers the upstream text for reuse only when it is one line and the chunk was not changed', () => {
    const mapper = adapter.chunkMapper();
    const chunk = {
      id: 'c',
      object: 'chat.completion.chunk',
      created: 1,
      model: 'm',
      choices: [{ index: 0, delta: { content: 'x' }, finish_reason: null }],
    };
    const oneLine = JSON.stringify(chunk);
    expect(mapper.map({ data: oneLine, event: undefined, id: undefined }).raw).toBe(oneLine);
    // Sent over several data: lines (joined with \n): reusing it would break the client's SSE framing.
    expect(
      mapper.map({ data: JSON.stringify(chunk, null, 1), event: undefined, id: undefined }).raw,
    ).toBeUndefined();
    // vLLM's `reasoning` is renamed, and usage is normalised: the text no longer matches the chunk.
    const reasoning = { ...chunk, choices: [{ index: 0, delta: { reasoning: 'r' }, finish_reason: null }] };
    expect(
      mapper.map({ data: JSON.stringify(reasoning), event: undefined, id: undefined }).raw,
    ).toBeUndefined();
    const usage = {
      ...chunk,
      choices: [],
      usage: { prompt_tokens: 1, completion_tokens: 2, total_tokens: 3 },
    };
    expect(mapper.map({ data: JSON.stringify(usage), event: undefined, id: undefined }).raw).toBeUndefined();
  });

  it("reads vLLM's integer codes and old flat error bodies without crashing", () => {
    expect(
      adapter
        .mapError(400, JSON.stringify({ error: { message: 'bad', type: 'BadRequestError', code: 400 } }), {})
        .toBody().error.code,
    ).toBeNull();
    expect(adapter.mapError(400, JSON.stringify({ object: 'error', message: 'flat bad' }), {}).message).toBe(
      'flat bad',
    );
    expect(adapter.mapError(500, '<html>oops</html>', {}).status).toBe(502);
  });

  it("turns an error in a 200's body into the upstream error its code stands for, scrubbed of the key", () => {
    const inBody = (error: Record<string, unknown>) => {
      try {
        adapter.parseResponse({ error });
      } catch (thrown) {
        return thrown as GatewayException;
      }
      throw new Error('no error thrown');
    };
    const failed = inBody({ code: 502, message: 'Provider returned error for sk-up' });
    expect(failed).toMatchObject({ code: 'upstream_error', status: 502 });
    expect(failed.message).toBe('Backend "b" failed with HTTP 502: Provider returned error for [redacted]');
    expect(inBody({ code: 503, message: 'busy' })).toMatchObject({
      code: 'upstream_unavailable',
      status: 503,
    });
    // A code that is not a status (OpenAI names types): a server error.
    expect(inBody({ code: 'server_error', message: 'oops' })).toMatchObject({
      code: 'upstream_error',
      status: 502,
      message: 'Backend "b" failed with HTTP 500: oops',
    });
  });

  it('turns a Response that failed (200, status failed) into an upstream error with its code, never a completion', () => {
    const native = new OpenAIAdapter(
      'r',
      Object.assign(new BackendConfig(), { ...backend, responsesApi: true }),
    );
    const response = {
      id: 'resp_1',
      status: 'failed',
      output: [],
      error: { code: 'server_error', message: 'Failed while using key sk-up.' },
    };
    expect(() => native.parseResponse(response, 'responses')).toThrow(GatewayException);
    try {
      native.parseResponse(response, 'responses');
    } catch (thrown) {
      expect(thrown).toMatchObject({ code: 'upstream_error', status: 502, wireCode: 'server_error' });
      expect((thrown as GatewayException).message).toBe(
        'Backend "r" failed the response (server_error): Failed while using key [redacted].',
      );
    }
    expect(
      native.parseResponse({ ...response, status: 'completed', error: null }, 'responses'),
    ).toMatchObject({
      choices: [{ finish_reason: 'stop' }],
    });
  });
});
