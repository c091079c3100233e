import { randomBytes } from 'node:crypto';
import { eventually } from '../support/eventually';
import { OpenAIUpstream } from '../support/openai-upstream';
import { OtlpReceiver, SPAN_KIND, type ReceivedSpan } from '../support/otlp-receiver';
import { startTestGateway, type TestGateway } from '../support/test-gateway';

/**
 * Traces over OTLP through the whole app, into a real OTLP/HTTP receiver that decodes JSON and protobuf itself
 * (test/support/otlp-receiver.ts): a SERVER span per model request, a CLIENT span per upstream call with the GenAI
 * attributes, the caller's traceparent continued, the call's own span context sent upstream, content only for teams
 * that keep it (redacted), sampling, and the request log's trace id.
 */
describe('tracing (OTLP)', () => {
  jest.setTimeout(60_000);
  let upstream: OpenAIUpstream;
  let receiver: OtlpReceiver;
  let json: TestGateway;
  let protobuf: TestGateway;
  let unsampled: TestGateway;
  let grpc: TestGateway;

  const models = {
    broken: { backend: 'standin', upstreamModel: 'status-503', fallbacks: ['echo'] },
    embedder: { backend: 'standin', upstreamModel: 'text-embedding-3-small', kind: 'embedding' },
  };
  const gateway = (protocol: string, sampleRatio = 1, endpoint = receiver.url) =>
    startTestGateway({
      upstreamUrl: upstream.url,
      config: {
        models,
        routing: { retries: { attempts: 0, backoffMs: 1 } },
        telemetry: {
          otlp: { endpoint, protocol, sampleRatio, exportDelayMs: 50, headers: { 'x-receiver-key': 'k1' } },
        },
      },
    });

  beforeAll(async () => {
    upstream = await new OpenAIUpstream().start();
    receiver = await new OtlpReceiver().start();
    await receiver.startGrpc();
    json = await gateway('http/json');
    protobuf = await gateway('http/protobuf');
    unsampled = await gateway('http/json', 0);
    grpc = await gateway('grpc', 1, receiver.grpcUrl);
  });
  afterAll(async () => {
    await json?.close();
    await protobuf?.close();
    await unsampled?.close();
    await grpc?.close();
    await receiver.stop();
    await upstream.stop();
  });

  async function team(gw: TestGateway, settings: Record<string, unknown> = {}) {
    const id = `trace-${randomBytes(4).toString('hex')}`;
    expect((await gw.admin('POST', '/admin/v1/teams', { id, ...settings })).status).toBe(201);
    const issued = await gw.admin('POST', `/admin/v1/teams/${id}/tokens`, { name: 'tracer' });
    expect(issued.status).toBe(201);
    return { id, token: issued.body.token as string };
  }

  async function post(gw: TestGateway, token: string, path: string, body: unknown, headers = {}) {
    const response = await fetch(`${gw.url}${path}`, {
      method: 'POST',
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json', ...headers },
      body: JSON.stringify(body),
    });
    const text = await response.text();
    return {
      status: response.status,
      headers: response.headers,
      text,
      body: text.startsWith('{') ? JSON.parse(text) : undefined,
    };
  }

  /** The spans of the request `requestId` once both kinds have arrived: its server span and its client spans. */
  async function spansOf(requestId: string, clientSpans = 1) {
    return eventually(() => {
      const server = receiver.spans.find((span) => span.attributes['switchyard.request_id'] === requestId);
      expect(server).toBeDefined();
      const calls = receiver.trace(server!.traceId).filter((span) => span.kind === SPAN_KIND.client);
      expect(calls).toHaveLength(clientSpans);
      return { server: server!, calls: calls.sort((a, b) => (a.startNs < b.startNs ? -1 : 1)) };
    }, 10_000);
  }

  /** The traceparent the stand-in upstream received with the last call for `model`. */
  function traceparentReceived(model: string): string {
    const calls = upstream.requests.filter((request) => request.body?.model === model);
    return String(calls[calls.length - 1].headers.traceparent);
  }

  it('continues a caller traceparent: a SERVER span under it, a CLIENT span per call with the GenAI attributes, its context sent upstream', async () => {
    const { id, token } = await team(json);
    const traceId = randomBytes(16).toString('hex');
    const callerSpan = randomBytes(8).toString('hex');
    const answer = await post(
      json,
      token,
      '/v1/chat/completions',
      { model: 'echo', messages: [{ role: 'user', content: 'hello big world' }] },
      { traceparent: `00-${traceId}-${callerSpan}-01` },
    );
    expect(answer.status).toBe(200);
    const { server, calls } = await spansOf(answer.headers.get('x-request-id')!);
    const [call] = calls;

    expect(server).toMatchObject({
      traceId,
      parentSpanId: callerSpan,
      name: 'POST /v1/chat/completions',
      kind: SPAN_KIND.server,
      statusCode: 0,
      service: 'switchyard',
    });
    expect(server.attributes).toMatchObject({
      'http.request.method': 'POST',
      'http.route': '/v1/chat/completions',
      'http.response.status_code': 200,
      'switchyard.team': id,
      'switchyard.model': 'echo',
    });
    expect(call).toMatchObject({
      traceId,
      parentSpanId: server.spanId,
      name: 'chat echo',
      kind: SPAN_KIND.client,
    });
    expect(call.attributes).toMatchObject({
      'gen_ai.operation.name': 'chat',
      'gen_ai.provider.name': 'openai',
      'gen_ai.request.model': 'echo',
      'gen_ai.response.model': 'echo',
      'gen_ai.request.stream': false,
      'gen_ai.usage.input_tokens': 3, // the stand-in counts words: "hello big world"
      'gen_ai.usage.output_tokens': answer.body.usage.completion_tokens,
      'server.address': '127.0.0.1',
      'switchyard.deployment': 'standin/echo',
    });
    expect(answer.body.usage.prompt_tokens).toBe(3);
    expect(call.attributes['error.type']).toBeUndefined();
    expect(call.attributes['gen_ai.input.messages']).toBeUndefined(); // the team keeps no content
    expect(call.attributes['gen_ai.output.messages']).toBeUndefined();
    // The call's own span context goes upstream (not the caller's): the provider's spans are the call's children.
    expect(traceparentReceived('echo')).toBe(`00-${traceId}-${call.spanId}-01`);
    expect(call.startNs).toBeGreaterThanOrEqual(server.startNs);
    expect(call.endNs).toBeLessThanOrEqual(server.endNs);
  });

  it("starts a trace when the caller sends none; the request log's entry carries its trace id", async () => {
    const { id, token } = await team(json);
    const answer = await post(json, token, '/v1/chat/completions', {
      model: 'echo',
      messages: [{ role: 'user', content: 'no trace here' }],
    });
    expect(answer.status).toBe(200);
    const { server, calls } = await spansOf(answer.headers.get('x-request-id')!);
    expect(server.parentSpanId).toBe('');
    expect(traceparentReceived('echo')).toBe(`00-${server.traceId}-${calls[0].spanId}-01`);
    const entry = await eventually(async () => {
      const page = await json.admin('GET', `/admin/v1/requests?team=${id}`);
      expect(page.body.data).toHaveLength(1);
      return page.body.data[0];
    }, 10_000);
    expect(entry.traceId).toBe(server.traceId);
  });

  it('a failed call then a fallback: two CLIENT spans under the server span, the first with error.type', async () => {
    const { token } = await team(json);
    const answer = await post(json, token, '/v1/chat/completions', {
      model: 'broken',
      messages: [{ role: 'user', content: 'try again' }],
    });
    expect(answer.status).toBe(200);
    expect(answer.headers.get('x-switchyard-attempts')).toBe('2');
    const { server, calls } = await spansOf(answer.headers.get('x-request-id')!, 2);
    const [failed, fallback] = calls;
    expect(failed).toMatchObject({ name: 'chat status-503', parentSpanId: server.spanId, statusCode: 2 });
    expect(failed.attributes).toMatchObject({
      'error.type': 'upstream_unavailable',
      'switchyard.model': 'broken',
      'switchyard.fallback': false,
    });
    expect(failed.attributes['gen_ai.usage.input_tokens']).toBeUndefined();
    expect(fallback).toMatchObject({ name: 'chat echo', parentSpanId: server.spanId, statusCode: 0 });
    expect(fallback.attributes).toMatchObject({ 'switchyard.model': 'echo', 'switchyard.fallback': true });
    expect(fallback.attributes['error.type']).toBeUndefined();
    expect(server.statusCode).toBe(0);
    // The SDK anchors each span's clock at its own Date.now() (whole milliseconds), so two spans' times can be
    // skewed by up to 1 ms: the failed call ended before the fallback started, within that.
    expect(failed.endNs).toBeLessThanOrEqual(fallback.startNs + 1_000_000n);
  });

  it('every call failed: the server span is in error with the code the client got', async () => {
    const { token } = await team(json);
    const answer = await post(json, token, '/v1/chat/completions', {
      model: 'status-500',
      messages: [{ role: 'user', content: 'fail' }],
    });
    expect(answer.status).toBeGreaterThanOrEqual(500);
    const { server, calls } = await spansOf(answer.headers.get('x-request-id')!);
    expect(calls[0]).toMatchObject({ name: 'chat status-500', statusCode: 2 });
    expect(server.statusCode).toBe(2);
    expect(server.attributes['error.type']).toBe(answer.body.error.code);
    expect(server.attributes['http.response.status_code']).toBe(answer.status);
  });

  it('content attributes only for a team that keeps content, redacted by the request log policy', async () => {
    const { token } = await team(json, { logging: { content: 'full' } });
    const answer = await post(json, token, '/v1/chat/completions', {
      model: 'echo',
      messages: [
        { role: 'system', content: 'Be brief.' },
        { role: 'user', content: 'mail jane.doe@example.com now' },
      ],
    });
    expect(answer.status).toBe(200);
    const { calls } = await spansOf(answer.headers.get('x-request-id')!);
    const input = JSON.parse(String(calls[0].attributes['gen_ai.input.messages']));
    const output = JSON.parse(String(calls[0].attributes['gen_ai.output.messages']));
    expect(input).toEqual([
      { role: 'system', parts: [{ type: 'text', content: 'Be brief.' }] },
      { role: 'user', parts: [{ type: 'text', content: 'mail [email] now' }] },
    ]);
    expect(output).toEqual([
      {
        role: 'assistant',
        parts: [{ type: 'text', content: 'echo: mail [email] now' }],
        finish_reason: 'stop',
      },
    ]);
    expect(JSON.stringify(calls[0].attributes)).not.toContain('jane.doe');
  });

  it('a stream: the answering call carries the usage the stream reported', async () => {
    const { token } = await team(json);
    const answer = await post(json, token, '/v1/chat/completions', {
      model: 'echo',
      stream: true,
      stream_options: { include_usage: true },
      messages: [{ role: 'user', content: 'one two three four' }],
    });
    expect(answer.status).toBe(200);
    const usage = answer.text
      .split('\n')
      .filter((line) => line.startsWith('data: {'))
      .map((line) => JSON.parse(line.slice(6)))
      .find((chunk) => chunk.usage)?.usage;
    const { calls } = await spansOf(answer.headers.get('x-request-id')!);
    expect(calls[0].attributes).toMatchObject({
      'gen_ai.request.stream': true,
      'gen_ai.usage.input_tokens': 4,
      'gen_ai.usage.output_tokens': usage.completion_tokens,
    });
  });

  it('embeddings: an `embeddings <model>` CLIENT span', async () => {
    const { token } = await team(json);
    const answer = await post(json, token, '/v1/embeddings', {
      model: 'embedder',
      input: 'four words in here',
    });
    expect(answer.status).toBe(200);
    const { server, calls } = await spansOf(answer.headers.get('x-request-id')!);
    expect(server.name).toBe('POST /v1/embeddings');
    expect(calls[0].name).toBe('embeddings text-embedding-3-small');
    expect(calls[0].attributes).toMatchObject({
      'gen_ai.operation.name': 'embeddings',
      'gen_ai.usage.input_tokens': answer.body.usage.prompt_tokens,
    });
  });

  it('OTLP protobuf: the same spans, decoded from the protobuf wire format', async () => {
    const { token } = await team(protobuf);
    const before = receiver.contentTypes.length;
    const answer = await post(protobuf, token, '/v1/chat/completions', {
      model: 'echo',
      messages: [{ role: 'user', content: 'sent as protobuf' }],
    });
    expect(answer.status).toBe(200);
    const { server, calls } = await spansOf(answer.headers.get('x-request-id')!);
    expect(receiver.contentTypes.slice(before)).toContain('application/x-protobuf');
    expect(receiver.headers[receiver.headers.length - 1]['x-receiver-key']).toBe('k1');
    expect(server).toMatchObject({
      name: 'POST /v1/chat/completions',
      kind: SPAN_KIND.server,
      service: 'switchyard',
    });
    expect(calls[0]).toMatchObject({
      name: 'chat echo',
      kind: SPAN_KIND.client,
      parentSpanId: server.spanId,
    });
    expect(calls[0].attributes).toMatchObject({
      'gen_ai.provider.name': 'openai',
      'gen_ai.usage.input_tokens': 3,
      'gen_ai.usage.output_tokens': answer.body.usage.completion_tokens,
    });
    expect(traceparentReceived('echo')).toBe(`00-${server.traceId}-${calls[0].spanId}-01`);
  });

  it('OTLP/gRPC: the same spans through the TraceService, the headers as metadata', async () => {
    const { token } = await team(grpc);
    const before = receiver.contentTypes.length;
    const answer = await post(grpc, token, '/v1/chat/completions', {
      model: 'echo',
      messages: [{ role: 'user', content: 'sent over grpc' }],
    });
    expect(answer.status).toBe(200);
    const { server, calls } = await spansOf(answer.headers.get('x-request-id')!);
    expect(receiver.contentTypes.slice(before)).toContain('application/grpc');
    expect(receiver.headers[receiver.headers.length - 1]['x-receiver-key']).toBe('k1');
    expect(calls[0]).toMatchObject({
      name: 'chat echo',
      kind: SPAN_KIND.client,
      parentSpanId: server.spanId,
    });
    expect(calls[0].attributes).toMatchObject({ 'gen_ai.usage.input_tokens': 3 });
  });

  it('/v1/messages: a POST /v1/messages server span over the call it was translated to', async () => {
    const { token } = await team(json);
    const answer = await post(
      json,
      token,
      '/v1/messages',
      { model: 'echo', max_tokens: 64, messages: [{ role: 'user', content: 'hello from claude' }] },
      { 'anthropic-version': '2023-06-01' },
    );
    expect(answer.status).toBe(200);
    const { server, calls } = await spansOf(answer.headers.get('x-request-id')!);
    expect(server.name).toBe('POST /v1/messages');
    expect(calls[0]).toMatchObject({ name: 'chat echo', parentSpanId: server.spanId });
    expect(calls[0].attributes).toMatchObject({
      'gen_ai.provider.name': 'openai',
      'gen_ai.request.max_tokens': 64,
      'gen_ai.usage.input_tokens': answer.body.usage.input_tokens,
      'gen_ai.usage.output_tokens': answer.body.usage.output_tokens,
    });
  });

  it('sampleRatio 0: no spans are exported, yet the trace id still goes upstream (unsampled) and into the request log', async () => {
    const { id, token } = await team(unsampled);
    const answer = await post(unsampled, token, '/v1/chat/completions', {
      model: 'echo',
      messages: [{ role: 'user', content: 'not sampled' }],
    });
    expect(answer.status).toBe(200);
    const requestId = answer.headers.get('x-request-id')!;
    const sent = /^00-([0-9a-f]{32})-([0-9a-f]{16})-00$/.exec(traceparentReceived('echo'));
    expect(sent).not.toBeNull();
    const entry = await eventually(async () => {
      const page = await unsampled.admin('GET', `/admin/v1/requests?team=${id}`);
      expect(page.body.data).toHaveLength(1);
      return page.body.data[0];
    }, 10_000);
    expect(entry.traceId).toBe(sent![1]);
    await new Promise((resolve) => setTimeout(resolve, 500)); // 10 export delays
    const exported: ReceivedSpan[] = receiver.trace(sent![1]);
    expect(exported).toEqual([]);
    expect(receiver.spans.some((span) => span.attributes['switchyard.request_id'] === requestId)).toBe(false);
  });
});
