import { ROOT_CONTEXT, SpanKind, SpanStatusCode, trace } from '@opentelemetry/api';
import { W3CTraceContextPropagator } from '@opentelemetry/core';
import {
  AlwaysOffSampler,
  InMemorySpanExporter,
  SimpleSpanProcessor,
  TracerProvider,
  type ReadableSpan,
  type Sampler,
} from '@opentelemetry/sdk-trace';
import type { Request } from 'express';
import type { Principal } from '../../src/auth/principal';
import type { UpstreamCall } from '../../src/core/upstream-call';
import { GatewayException } from '../../src/core/errors/gateway.exception';
import { Exchange } from '../../src/gateway/exchange';
import type { TracedCall } from '../../src/gateway/request-trace';
import { MAX_KEPT_CHARS } from '../../src/request-log/kept-content';
import { Redactor } from '../../src/request-log/redaction/redactor';
import { contentAttribute, inputMessages, outputMessages } from '../../src/telemetry/gen-ai-content';
import { genAiProviderName, serverOf } from '../../src/telemetry/gen-ai-provider';
import { tracesUrl } from '../../src/telemetry/otlp-exporter';
import { errorTypeOf, RequestSpans, usageAttributes } from '../../src/telemetry/request-spans';
import { ATTR } from '../../src/telemetry/semconv';
import { Tracing } from '../../src/telemetry/tracing';
import type { GatewayConfig } from '../../src/config/config.schema';
import type { AppLogger } from '../../src/common/logging/logger';

/** The tracing's mapping and span logic (telemetry/), on the SDK's in-memory exporter and fake requests. */

const redactor = new Redactor();

describe('semantic convention names', () => {
  // The GenAI names are Development status: held here to the package the gateway pins (1.45.0), so a rename is seen.
  const incubating = jest.requireActual<Record<string, unknown>>(
    '@opentelemetry/semantic-conventions/incubating',
  );
  const expected: Record<keyof typeof ATTR, string> = {
    httpRequestMethod: 'ATTR_HTTP_REQUEST_METHOD',
    httpRoute: 'ATTR_HTTP_ROUTE',
    httpResponseStatusCode: 'ATTR_HTTP_RESPONSE_STATUS_CODE',
    urlPath: 'ATTR_URL_PATH',
    urlScheme: 'ATTR_URL_SCHEME',
    clientAddress: 'ATTR_CLIENT_ADDRESS',
    userAgent: 'ATTR_USER_AGENT_ORIGINAL',
    serverAddress: 'ATTR_SERVER_ADDRESS',
    serverPort: 'ATTR_SERVER_PORT',
    errorType: 'ATTR_ERROR_TYPE',
    operationName: 'ATTR_GEN_AI_OPERATION_NAME',
    providerName: 'ATTR_GEN_AI_PROVIDER_NAME',
    requestModel: 'ATTR_GEN_AI_REQUEST_MODEL',
    requestStream: 'ATTR_GEN_AI_REQUEST_STREAM',
    requestMaxTokens: 'ATTR_GEN_AI_REQUEST_MAX_TOKENS',
    requestTemperature: 'ATTR_GEN_AI_REQUEST_TEMPERATURE',
    requestTopP: 'ATTR_GEN_AI_REQUEST_TOP_P',
    responseModel: 'ATTR_GEN_AI_RESPONSE_MODEL',
    inputTokens: 'ATTR_GEN_AI_USAGE_INPUT_TOKENS',
    outputTokens: 'ATTR_GEN_AI_USAGE_OUTPUT_TOKENS',
    cacheReadInputTokens: 'ATTR_GEN_AI_USAGE_CACHE_READ_INPUT_TOKENS',
    cacheCreationInputTokens: 'ATTR_GEN_AI_USAGE_CACHE_CREATION_INPUT_TOKENS',
    reasoningOutputTokens: 'ATTR_GEN_AI_USAGE_REASONING_OUTPUT_TOKENS',
    inputMessages: 'ATTR_GEN_AI_INPUT_MESSAGES',
    outputMessages: 'ATTR_GEN_AI_OUTPUT_MESSAGES',
  };

  it.each(Object.entries(expected))('%s is %s', (name, constant) => {
    expect(incubating[constant]).toBeDefined();
    expect(ATTR[name as keyof typeof ATTR]).toBe(incubating[constant]);
  });

  it("the provider names are the conventions' well-known values", () => {
    const known = Object.entries(incubating)
      .filter(([key]) => key.startsWith('GEN_AI_PROVIDER_NAME_VALUE_'))
      .map(([, value]) => value);
    for (const family of ['openai', 'anthropic', 'gemini', 'vertex', 'bedrock', 'azure'])
      expect(known).toContain(genAiProviderName(family));
  });
});

describe('gen_ai.provider.name and server', () => {
  it.each([
    ['openai', 'openai'],
    ['anthropic', 'anthropic'],
    ['gemini', 'gcp.gemini'],
    ['vertex', 'gcp.vertex_ai'],
    ['bedrock', 'aws.bedrock'],
    ['azure', 'azure.ai.openai'],
    ['local', 'switchyard.local'],
    ['brand-new', 'brand-new'],
    ['constructor', 'constructor'], // not read off the prototype
  ])('%s -> %s', (family, provider) => expect(genAiProviderName(family)).toBe(provider));

  it('server.address and port from a base URL, the port implied by the scheme', () => {
    expect(serverOf('https://api.openai.com/v1')).toEqual({ address: 'api.openai.com', port: 443 });
    expect(serverOf('http://vllm:8000/v1')).toEqual({ address: 'vllm', port: 8000 });
    expect(serverOf('http://[::1]/v1')).toEqual({ address: '::1', port: 80 });
    expect(serverOf(undefined)).toBeUndefined();
    expect(serverOf('not a url')).toBeUndefined();
  });

  it('OTLP/HTTP traces URL: <endpoint>/v1/traces unless it is already there', () => {
    expect(tracesUrl('http://collector:4318')).toBe('http://collector:4318/v1/traces');
    expect(tracesUrl('http://collector:4318/')).toBe('http://collector:4318/v1/traces');
    expect(tracesUrl('https://otlp.example.com/otlp/v1/traces')).toBe(
      'https://otlp.example.com/otlp/v1/traces',
    );
  });
});

describe('content attributes', () => {
  it("input messages in the conventions' schema: text, tool calls and results, other parts by type only", () => {
    expect(
      inputMessages([
        { role: 'developer', content: 'Be brief.' },
        {
          role: 'user',
          content: [
            { type: 'text', text: 'What is this?' },
            { type: 'image_url', image_url: { url: 'data:image/png;base64,AAAA' } },
          ],
        },
        {
          role: 'assistant',
          content: null,
          tool_calls: [{ id: 'c1', type: 'function', function: { name: 'look', arguments: '{"q":1}' } }],
        },
        { role: 'tool', tool_call_id: 'c1', content: 'a cat' },
      ]),
    ).toEqual([
      { role: 'system', parts: [{ type: 'text', content: 'Be brief.' }] },
      { role: 'user', parts: [{ type: 'text', content: 'What is this?' }, { type: 'image_url' }] },
      { role: 'assistant', parts: [{ type: 'tool_call', id: 'c1', name: 'look', arguments: '{"q":1}' }] },
      { role: 'tool', parts: [{ type: 'tool_call_response', id: 'c1', response: 'a cat' }] },
    ]);
  });

  it('output messages: reasoning, text and tool calls, with a finish reason', () => {
    expect(
      outputMessages([
        { role: 'assistant', content: 'Hi', reasoning_content: 'think' },
        {
          role: 'assistant',
          content: null,
          tool_calls: [{ id: 'x', function: { name: 'f', arguments: '{}' } }],
        },
      ]),
    ).toEqual([
      {
        role: 'assistant',
        parts: [
          { type: 'reasoning', content: 'think' },
          { type: 'text', content: 'Hi' },
        ],
        finish_reason: 'stop',
      },
      {
        role: 'assistant',
        parts: [{ type: 'tool_call', id: 'x', name: 'f', arguments: '{}' }],
        finish_reason: 'tool_call',
      },
    ]);
    expect(outputMessages(undefined)).toEqual([]);
  });

  it("is redacted by the gateway's Redactor, and cut to the request log's size as text past it", () => {
    const attribute = contentAttribute(
      inputMessages([{ role: 'user', content: 'I am jane@example.com' }]),
      redactor,
    );
    expect(JSON.parse(attribute)).toEqual([
      { role: 'user', parts: [{ type: 'text', content: 'I am [email]' }] },
    ]);
    const huge = contentAttribute(
      inputMessages([{ role: 'user', content: `jane@example.com ${'x'.repeat(MAX_KEPT_CHARS)}` }]),
      redactor,
    );
    expect(huge.length).toBeLessThanOrEqual(MAX_KEPT_CHARS);
    expect(huge).toContain('[email]');
    expect(huge).not.toContain('jane@');
  });
});

describe('usage and error attributes', () => {
  it('input includes cached tokens as counted; cache reads, reasoning and estimates only when there are some', () => {
    expect(usageAttributes({ prompt: 10, completion: 5, reasoning: 0, cached: 0, estimated: false })).toEqual(
      {
        [ATTR.inputTokens]: 10,
        [ATTR.outputTokens]: 5,
      },
    );
    expect(
      usageAttributes({ prompt: 10, completion: 5, reasoning: 2, cached: 4, cacheWrite: 3, estimated: true }),
    ).toEqual({
      [ATTR.inputTokens]: 10,
      [ATTR.outputTokens]: 5,
      [ATTR.cacheReadInputTokens]: 4,
      [ATTR.cacheCreationInputTokens]: 3,
      [ATTR.reasoningOutputTokens]: 2,
      'switchyard.usage.estimated': true,
    });
    expect(usageAttributes(undefined)).toEqual({});
  });

  it('error.type: the gateway code, cancelled for an abort, else the error name', () => {
    expect(errorTypeOf(new GatewayException('upstream_timeout', 'slow'))).toBe('upstream_timeout');
    expect(errorTypeOf(Object.assign(new Error('x'), { name: 'AbortError' }))).toBe('cancelled');
    expect(errorTypeOf(new TypeError('x'))).toBe('TypeError');
    expect(errorTypeOf('what')).toBe('_OTHER');
  });
});

describe('RequestSpans', () => {
  const caller = (keepsContent = false): Principal =>
    ({
      tokenId: 't',
      teamId: 'team-a',
      models: ['*'],
      tokenModels: null,
      teamLimits: {},
      tokenLimits: {},
      keepsContent,
    }) as Principal;
  const deployment = (upstreamModel: string, family = 'anthropic') => ({
    id: `b/${upstreamModel}`,
    upstreamModel,
    weight: 1,
    priority: 0,
    backend: { id: 'b', adapter: { family }, client: {} },
  });
  const target = (upstreamModel: string, fallback = false): TracedCall =>
    ({
      operation: 'chat',
      deployment: deployment(upstreamModel),
      model: 'alias',
      fallback,
      chat: { model: 'alias', messages: [{ role: 'user', content: 'hi jane@example.com' }], max_tokens: 50 },
    }) as unknown as TracedCall;

  function setUp(sampler?: Sampler) {
    const exporter = new InMemorySpanExporter();
    const provider = new TracerProvider({ sampler, spanProcessors: [new SimpleSpanProcessor({ exporter })] });
    const exchange = new Exchange('req-1');
    const headers: Record<string, string> = {};
    const req = {
      method: 'POST',
      originalUrl: '/v1/messages?beta=true',
      headers,
      protocol: 'https',
      ip: '10.0.0.9',
      exchange,
    } as unknown as Request;
    const spans = () =>
      new RequestSpans(
        {
          tracer: provider.getTracer('test'),
          propagator: new W3CTraceContextPropagator(),
          redactor,
          serverOf: () => ({ address: 'api.anthropic.com', port: 443 }),
        },
        exchange,
        req,
      );
    const call = (): UpstreamCall => ({ path: '/v1/messages', headers: { 'x-api-key': 'k' }, body: '{}' });
    const finished = () => exporter.getFinishedSpans();
    return { exchange, headers, spans, call, finished };
  }
  const byKind = (spans: ReadableSpan[], kind: SpanKind) => spans.filter((span) => span.kind === kind);

  it('a failed call, then an answered one: each a CLIENT child of the SERVER span; usage on the answering one', () => {
    const { exchange, spans, call, finished } = setUp();
    exchange.authenticated(caller());
    const traced = spans();
    const first = call();
    const shared = first.headers;
    traced.calling(first, target('claude-a'));
    expect(shared).toEqual({ 'x-api-key': 'k' }); // the adapter's object is not written to
    traced.callFailed(new GatewayException('upstream_unavailable', 'down'));
    const second = call();
    traced.calling(second, target('claude-b', true));
    exchange.routed('alias', 'b', 'claude-a');
    exchange.answered({ backend: 'b', upstreamModel: 'claude-b', servedModel: 'fallback', attempts: 2 });
    exchange.counted({ prompt: 7, completion: 3, reasoning: 0, estimated: false });
    traced.end(200);
    traced.end(200); // once only

    const [server] = byKind(finished(), SpanKind.SERVER);
    const [failed, answered] = byKind(finished(), SpanKind.CLIENT);
    expect(finished()).toHaveLength(3);
    expect(server.name).toBe('POST /v1/messages');
    expect(server.attributes).toMatchObject({
      [ATTR.httpRoute]: '/v1/messages',
      [ATTR.urlScheme]: 'https',
      [ATTR.clientAddress]: '10.0.0.9',
      [ATTR.httpResponseStatusCode]: 200,
      'switchyard.team': 'team-a',
      'switchyard.request_id': 'req-1',
    });
    expect(server.status.code).toBe(SpanStatusCode.UNSET);
    expect(failed.name).toBe('chat claude-a');
    expect(failed.attributes).toMatchObject({
      [ATTR.errorType]: 'upstream_unavailable',
      [ATTR.providerName]: 'anthropic',
    });
    expect(failed.status.code).toBe(SpanStatusCode.ERROR);
    expect(answered.name).toBe('chat claude-b');
    expect(answered.attributes).toMatchObject({
      [ATTR.operationName]: 'chat',
      [ATTR.requestModel]: 'claude-b',
      [ATTR.responseModel]: 'claude-b',
      [ATTR.requestMaxTokens]: 50,
      [ATTR.serverAddress]: 'api.anthropic.com',
      [ATTR.serverPort]: 443,
      [ATTR.inputTokens]: 7,
      [ATTR.outputTokens]: 3,
      'switchyard.fallback': true,
    });
    expect(answered.attributes[ATTR.errorType]).toBeUndefined();
    expect(answered.attributes[ATTR.inputMessages]).toBeUndefined();
    for (const span of [failed, answered]) {
      expect(span.parentSpanContext?.spanId).toBe(server.spanContext().spanId);
      expect(span.spanContext().traceId).toBe(traced.traceId);
    }
    expect(second.headers.traceparent).toBe(`00-${traced.traceId}-${answered.spanContext().spanId}-01`);
    expect(first.headers.traceparent).toBe(`00-${traced.traceId}-${failed.spanContext().spanId}-01`);
  });

  it("continues the caller's traceparent", () => {
    const { headers, spans, finished } = setUp();
    headers.traceparent = '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01';
    const traced = spans();
    traced.end(401);
    expect(traced.traceId).toBe('0af7651916cd43dd8448eb211c80319c');
    expect(finished()[0].parentSpanContext?.spanId).toBe('b7ad6b7169203331');
  });

  it('content attributes for a team that keeps content: the input once per request, the answer, both redacted', () => {
    const { exchange, spans, call, finished } = setUp();
    exchange.authenticated(caller(true));
    const traced = spans();
    traced.calling(call(), target('claude-a'));
    exchange.answered({ backend: 'b', upstreamModel: 'claude-a', servedModel: 'alias', attempts: 1 });
    exchange.answerForLog([{ role: 'assistant', content: 'write to jane@example.com' }]);
    traced.end(200);
    const [answered] = byKind(finished(), SpanKind.CLIENT);
    expect(JSON.parse(String(answered.attributes[ATTR.inputMessages]))).toEqual([
      { role: 'user', parts: [{ type: 'text', content: 'hi [email]' }] },
    ]);
    expect(JSON.parse(String(answered.attributes[ATTR.outputMessages]))).toEqual([
      { role: 'assistant', parts: [{ type: 'text', content: 'write to [email]' }], finish_reason: 'stop' },
    ]);
  });

  it('a call never answered (withdrawn, or the request failed) ends in error with the code the client got', () => {
    const { exchange, spans, call, finished } = setUp();
    exchange.authenticated(caller());
    const traced = spans();
    traced.calling(call(), target('local-a'));
    exchange.refused();
    exchange.failed('rate_limit_exceeded');
    traced.end(429);
    const [server] = byKind(finished(), SpanKind.SERVER);
    const [withdrawn] = byKind(finished(), SpanKind.CLIENT);
    expect(withdrawn.attributes[ATTR.errorType]).toBe('rate_limit_exceeded');
    expect(server.status.code).toBe(SpanStatusCode.UNSET); // a 4xx is the client's
  });

  it('a 5xx puts the server span in error with the error code', () => {
    const { exchange, spans, finished } = setUp();
    exchange.failed('upstream_timeout');
    spans().end(504);
    expect(finished()[0].status.code).toBe(SpanStatusCode.ERROR);
    expect(finished()[0].attributes[ATTR.errorType]).toBe('upstream_timeout');
  });

  it('not sampled: nothing exported, no attributes built, and the ids still go upstream (flags 00)', () => {
    const { exchange, spans, call, finished } = setUp(new AlwaysOffSampler());
    exchange.authenticated(caller(true));
    const traced = spans();
    const sent = call();
    traced.calling(sent, target('claude-a'));
    traced.end(200);
    expect(finished()).toEqual([]);
    expect(sent.headers.traceparent).toMatch(new RegExp(`^00-${traced.traceId}-[0-9a-f]{16}-00$`));
    expect(traced.traceId).not.toMatch(/^0+$/);
  });
});

describe('Tracing', () => {
  it('off without telemetry.otlp: no tracer at all', async () => {
    const tracing = await Tracing.fromConfig(
      { telemetry: {}, backends: {} } as unknown as GatewayConfig,
      redactor,
      {} as AppLogger,
    );
    expect(tracing.enabled).toBe(false);
    await tracing.shutdown(); // nothing to flush
  });

  it('on with it: each request gets its spans; the shutdown flushes them', async () => {
    const logged: string[] = [];
    const logger = { pino: { info: (_: unknown, msg: string) => logged.push(msg), warn: () => undefined } };
    const tracing = await Tracing.fromConfig(
      {
        telemetry: {
          otlp: {
            endpoint: 'http://127.0.0.1:9',
            protocol: 'grpc',
            headers: { a: 'b' },
            sampleRatio: 1,
            exportDelayMs: 5000,
          },
        },
        backends: { b: { baseUrl: 'http://b:1' } },
      } as unknown as GatewayConfig,
      redactor,
      logger as unknown as AppLogger,
    );
    expect(tracing.enabled).toBe(true);
    expect(logged).toEqual(['tracing: spans go over OTLP']);
    const req = {
      method: 'POST',
      originalUrl: '/v1/chat/completions',
      headers: {},
      exchange: new Exchange('r'),
    };
    const spans = tracing.start(req as unknown as Request);
    expect(spans.traceId).toMatch(/^[0-9a-f]{32}$/);
    expect(trace.getSpan(ROOT_CONTEXT)).toBeUndefined(); // nothing registered globally
    await tracing.shutdown();
  });
});
