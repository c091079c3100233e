import { EventEmitter } from 'node:events';
import { countTurns } from '../support/event-loop-turns';
import type { Request, Response } from 'express';
import type { Principal } from '../../src/auth/principal';
import type { PriceBook } from '../../src/billing/price-book';
import { AppLogger } from '../../src/common/logging/logger';
import { buildConfig } from '../support/config';
import type { ModelConfig } from '../../src/config/config.schema';
import { openAiErrors } from '../../src/core/errors/error-shape';
import { GatewayException } from '../../src/core/errors/gateway.exception';
import type { ChatCompletion } from '../../src/core/openai-types';
import type { EndpointSpec } from '../../src/gateway/endpoint-spec';
import { Exchange } from '../../src/gateway/exchange';
import { noteBodyShape, PACED_BODY_BYTES } from '../../src/common/http/json-shape';
import { Pipeline } from '../../src/gateway/pipeline';
import type { RequestAdmission } from '../../src/gateway/request-admission';
import { UpstreamCaller } from '../../src/gateway/upstream-caller';
import { InFlightTracker } from '../../src/lifecycle/in-flight.tracker';
import { MetricsService } from '../../src/metrics/metrics.service';
import type { Backend, UpstreamCall } from '../../src/providers/provider-adapter';
import type { UpstreamResponse } from '../../src/providers/upstream-client';
import { mapUpstreamError } from '../../src/providers/upstream-errors';
import { BackendHealth } from '../../src/routing/backend-health';
import { CircuitBreakers } from '../../src/routing/circuit-breakers';
import type { Deployment, ModelRouter, Route, RoutedModel } from '../../src/routing/model-router.service';
import type { RelayOutcome, StreamRelay } from '../../src/streaming/stream-relay.service';
import { ResponseCache } from '../../src/response-cache/response-cache.service';
import type { TokenCounter } from '../../src/usage/token-counter';
import { InMemoryResponseCacheEntries } from '../support/in-memory-response-cache';

/**
 * The pipeline against in-memory fakes (no Redis, no HTTP): in-memory backends whose answers each test scripts, an
 * admission that admits or refuses, a relay that reports what a stream did. What is checked is what the pipeline
 * decides: which calls it makes in what order, and what it writes on the request's exchange.
 */

type Script = (signal: AbortSignal) => Promise<UpstreamResponse>;

const caller: Principal = {
  tokenId: 't1',
  teamId: 'team',
  models: ['*'],
  tokenModels: null,
  teamLimits: {},
  tokenLimits: {},
} as Principal;

const completion = (text: string, usage = true): ChatCompletion =>
  ({
    id: 'c1',
    object: 'chat.completion',
    created: 0,
    model: 'upstream',
    choices: [{ index: 0, message: { role: 'assistant', content: text }, finish_reason: 'stop' }],
    ...(usage ? { usage: { prompt_tokens: 5, completion_tokens: 2, total_tokens: 7 } } : {}),
  }) as ChatCompletion;

const answer = (body: unknown): UpstreamResponse =>
  ({ status: 200, headers: {}, body: { json: async () => body, text: async () => '' } }) as never;

const serverError = () =>
  mapUpstreamError({ backendId: 'x', status: 500, message: 'boom', headers: {}, secrets: [] });

/** A call that never answers until its signal aborts (then it rejects as undici does). */
const hangs: Script = (signal) =>
  new Promise((_resolve, reject) =>
    signal.addEventListener(
      'abort',
      () => reject(Object.assign(new Error('aborted'), { name: 'AbortError' })),
      {
        once: true,
      },
    ),
  );

/** A response that records what the pipeline wrote, and can be closed by its client. */
class FakeResponse extends EventEmitter {
  headers: Record<string, string> = {};
  statusCode = 200;
  body?: string;
  writableFinished = false;
  writableEnded = false;
  get headersSent(): boolean {
    return this.body !== undefined;
  }
  setHeader(name: string, value: string): void {
    this.headers[name.toLowerCase()] = value;
  }
  writeHead(status: number, headers: Record<string, string>): void {
    this.statusCode = status;
    for (const [name, value] of Object.entries(headers)) this.setHeader(name, value);
  }
  end(body: string): void {
    this.body = body;
    this.writableEnded = this.writableFinished = true;
    this.emit('close');
  }
  /** The client goes away before the answer. */
  leave(): void {
    this.emit('close');
  }
}

function setup(
  options: {
    cancelsAtNoCost?: string[];
    refuse?: boolean;
    fallback?: string[];
    /** Admissions answer once this resolves (all at once: one read from Redis answering several). */
    admitAfter?: Promise<void>;
    /** Runs as an upstream call is built. */
    onBuild?: () => void;
    /** The model has a response cache (its entries in memory). */
    responseCache?: boolean;
  } = {},
) {
  const config = buildConfig(
    {
      admin: { apiKey: 'k' },
      routing: {
        retries: { attempts: 2, backoffMs: 0, maxRetryAfterMs: 100 },
        circuit: { failures: 5, cooldownMs: 60_000 },
      },
    },
    {},
  );
  const logger = new AppLogger('error', { write: () => undefined });
  const metrics = new MetricsService(config, new InFlightTracker());
  const scripts = new Map<string, Script[]>();
  /** Every call made, in order: `<backend>` (or `<backend>:embed`). */
  const calls: string[] = [];
  /** The signal each call was made with, by backend. */
  const signals = new Map<string, AbortSignal>();
  const backends = new Map<string, Backend>();
  const backend = (id: string): Backend => {
    if (!backends.has(id))
      backends.set(id, {
        id,
        adapter: {
          buildRequest: (): UpstreamCall => {
            options.onBuild?.();
            return { path: '/chat', headers: {}, body: '{}' };
          },
          parseResponse: (body: unknown) => body as ChatCompletion,
          decodeStream: () => ({}) as never, // the relay stand-in reads no events
          mapError: () => serverError(),
          validate: (request: { tools?: unknown[] }) => {
            if (id.startsWith('picky') && request.tools)
              throw new GatewayException('invalid_request', 'no tools here');
          },
          ...(id.startsWith('embed')
            ? {
                buildEmbeddingRequest: (): UpstreamCall => ({ path: '/embeddings', headers: {}, body: '{}' }),
                parseEmbeddingResponse: (body: unknown) => body as never,
              }
            : {}),
        } as unknown as Backend['adapter'],
        client: {
          send: (_call: UpstreamCall, signal: AbortSignal) => {
            calls.push(id);
            signals.set(id, signal);
            const next = scripts.get(id)?.shift();
            return next ? next(signal) : Promise.resolve(answer(completion(`from ${id}`)));
          },
          transportError: (e: unknown) => e,
          close: async () => undefined,
          cancelsAtNoCost: options.cancelsAtNoCost?.includes(id),
        },
      } as Backend);
    return backends.get(id)!;
  };
  const deployment = (id: string): Deployment => ({
    id: `${id}/m`,
    backend: backend(id),
    upstreamModel: 'm',
    weight: 1,
    priority: 0,
  });
  const modelConfig = {
    ...config.models.x,
    kind: 'chat',
    routing: 'priority',
    thinking: 'none',
    ...(options.responseCache ? { responseCache: { ttlSeconds: 60, maxEntryBytes: 10_000 } } : {}),
  } as ModelConfig;
  const routed = (model: string, ids: string[], kind = 'chat'): RoutedModel => ({
    model,
    config: { ...modelConfig, kind } as ModelConfig,
    deployments: ids.map(deployment),
  });
  let route: Route;
  const routeTo = (ids: string[], kind = 'chat') => {
    const main = routed('model', ids, kind);
    route = {
      ...main,
      backend: main.deployments[0].backend,
      fallbacks: options.fallback ? [routed('fallback', options.fallback, kind)] : [],
    };
  };
  const router = { resolve: () => route } as unknown as ModelRouter;
  const circuits = new CircuitBreakers(config, metrics, logger);
  const health = new BackendHealth(backends, circuits, config, logger);
  const upstream = new UpstreamCaller(circuits, metrics, config, health, logger);
  const order: string[] = [];
  const cacheEntries = new InMemoryResponseCacheEntries();
  const admission = {
    admit: jest.fn(async () => {
      order.push('admit');
      if (options.admitAfter) await options.admitAfter;
      if (options.refuse) throw new GatewayException('rate_limit_exceeded', 'over quota');
      return { reservation: undefined, concurrencyKeys: [] };
    }),
  } as unknown as RequestAdmission;
  const relayed: RelayOutcome[] = [];
  let relayOutcome: Partial<RelayOutcome> = {};
  const relay = {
    relay: async ({ signal }: { signal: AbortSignal }) => {
      const outcome: RelayOutcome = {
        completed: true,
        aborted: signal.aborted,
        relayedText: ['hello'],
        reasoningText: [],
        ...relayOutcome,
      };
      relayed.push(outcome);
      return outcome;
    },
    finish: jest.fn(),
  } as unknown as StreamRelay;
  const counter = {
    prompt: async () => 11,
    texts: async () => 3,
    fillReasoningTokens: async () => false,
  } as unknown as TokenCounter;
  const prices = { priceOf: () => undefined } as unknown as PriceBook;
  const pipeline = new Pipeline(
    router,
    relay,
    config,
    counter,
    admission,
    upstream,
    prices,
    new InFlightTracker(),
    logger,
    new ResponseCache(cacheEntries, metrics, logger),
  );

  const chatSpec: EndpointSpec<{ model: string; stream?: boolean; tools?: unknown[] }> = {
    path: '/v1/test',
    billedAs: 'chat.completions',
    errors: openAiErrors,
    keepsClientBytes: false,
    open: (body) => ({
      kind: 'chat',
      request: { messages: [{ role: 'user', content: 'hi' }], ...body } as never,
      wire: { streamEncoder: () => ({}) as never },
      reply: (answered) => answered.completion,
    }),
  };
  const embeddingSpec: EndpointSpec<{ model: string; input: string }> = {
    path: '/v1/test-embeddings',
    billedAs: 'embeddings',
    errors: openAiErrors,
    keepsClientBytes: false,
    open: (request) => ({
      kind: 'embedding',
      request,
      prompt: { fixed: 0, texts: [request.input] },
      exactTokens: undefined,
      reply: (reply) => reply,
    }),
  };

  /** Serves one request; the exchange records each step it was given (to count the writes). */
  const serve = <Body extends object>(spec: EndpointSpec<Body>, body: Body) => {
    const exchange = new Exchange('req-1');
    exchange.authenticated(caller);
    const counted = jest.spyOn(exchange, 'counted');
    const res = new FakeResponse();
    const req = { exchange, headers: {}, body } as unknown as Request;
    const done = pipeline.serve(spec, body, req, res as unknown as Response);
    return { exchange, res, done, counted };
  };
  return {
    scripts,
    calls,
    signals,
    order,
    admission,
    relayed,
    setRelayOutcome: (outcome: Partial<RelayOutcome>) => (relayOutcome = outcome),
    routeTo,
    serve,
    chatSpec,
    embeddingSpec,
    cacheEntries,
  };
}

describe('Pipeline', () => {
  it('a response cache hit is admitted, then replayed: no call, the first answer and its counts, cacheHit', async () => {
    const t = setup({ responseCache: true });
    t.routeTo(['a']);
    const first = t.serve(t.chatSpec, { model: 'model' });
    await first.done;
    expect(first.res.headers['x-switchyard-cache']).toBe('miss');
    await new Promise((resolve) => setImmediate(resolve)); // the store is not awaited by the request
    expect(t.cacheEntries.entries.size).toBe(1);

    const second = t.serve(t.chatSpec, { model: 'model' });
    await second.done;
    expect(t.calls).toEqual(['a']);
    expect(t.admission.admit).toHaveBeenCalledTimes(2);
    expect(second.res.headers['x-switchyard-cache']).toBe('hit');
    expect(second.res.body).toBe(first.res.body);
    expect(second.exchange).toMatchObject({
      cacheHit: true,
      attempts: 0,
      backend: '',
      servedModel: 'model',
      tokens: first.exchange.tokens,
    });
    expect(second.exchange.upstreamStartedAt).toBeUndefined();
  });

  it('a response cache hit the limits refuse is not replayed', async () => {
    const t = setup({ responseCache: true });
    t.routeTo(['a']);
    await t.serve(t.chatSpec, { model: 'model' }).done;
    await new Promise((resolve) => setImmediate(resolve));
    t.admission.admit = jest.fn(async () => {
      throw new GatewayException('rate_limit_exceeded', 'over quota');
    }) as never;
    const refused = t.serve(t.chatSpec, { model: 'model' });
    await expect(refused.done).rejects.toMatchObject({ code: 'rate_limit_exceeded' });
    expect(refused.res.body).toBeUndefined();
    expect(refused.exchange).toMatchObject({ cacheHit: false, limitRejected: true });
  });

  it('retries on the next deployment, then the fallback, in plan order; the exchange names who answered', async () => {
    const t = setup({ fallback: ['c'] });
    t.routeTo(['a', 'b']);
    t.scripts.set('a', [() => Promise.reject(serverError()), () => Promise.reject(serverError())]);
    t.scripts.set('b', [() => Promise.reject(serverError())]);
    const { exchange, res, done } = t.serve(t.chatSpec, { model: 'model' });
    await done;
    expect(t.calls).toEqual(['a', 'b', 'a', 'c']);
    expect(exchange).toMatchObject({ backend: 'c', servedModel: 'fallback', model: 'model', attempts: 4 });
    expect(res.headers).toMatchObject({ 'x-switchyard-backend': 'c', 'x-switchyard-attempts': '4' });
    expect(JSON.parse(res.body!)).toMatchObject({
      model: 'model',
      choices: [{ message: { content: 'from c' } }],
    });
  });

  it('passes over a fallback whose vendor rules the request breaks, and says so when nothing else can answer', async () => {
    const t = setup({ fallback: ['picky'] });
    t.routeTo(['a']);
    t.scripts.set(
      'a',
      [0, 1, 2].map(() => () => Promise.reject(serverError())),
    );
    const { exchange, done } = t.serve(t.chatSpec, { model: 'model', tools: [{}] });
    await expect(done).rejects.toMatchObject({
      code: 'upstream_error',
      message: expect.stringContaining('skipped fallback on picky/m: no tools here'),
    });
    expect(t.calls).toEqual(['a', 'a', 'a']);
    expect(exchange).toMatchObject({ backend: 'a', attempts: 3, upstreamErrorReason: 'upstream_error' });
  });

  it('never retries once a stream has its first byte: a stream that breaks ends the request with that error', async () => {
    const t = setup();
    t.routeTo(['a', 'b']);
    t.setRelayOutcome({ completed: false, error: serverError() });
    const { exchange, done, counted } = t.serve(t.chatSpec, { model: 'model', stream: true });
    await done;
    expect(t.calls).toEqual(['a']);
    expect(exchange).toMatchObject({ errorCode: 'upstream_error', backend: 'a', attempts: 1 });
    expect(counted).toHaveBeenCalledTimes(1);
  });

  it.each([
    ['answered whole', { stream: false }, undefined],
    ['streamed', { stream: true }, undefined],
    ['every call failed', { stream: false }, 'fail'],
  ] as const)('writes one token count on the exchange per request (%s)', async (_name, body, fail) => {
    const t = setup();
    t.routeTo(['a']);
    if (fail)
      t.scripts.set(
        'a',
        [0, 1, 2].map(() => () => Promise.reject(serverError())),
      );
    t.setRelayOutcome({ usage: { prompt_tokens: 5, completion_tokens: 2, total_tokens: 7 } });
    const { done, counted, exchange } = t.serve(t.chatSpec, { model: 'model', ...body });
    if (fail) await expect(done).rejects.toMatchObject({ code: 'upstream_error' });
    else await done;
    // A request that failed before any answer, and was not abandoned, has no tokens to count (the recorder writes 0).
    expect(counted).toHaveBeenCalledTimes(fail ? 0 : 1);
    if (!fail) expect(exchange.tokens).toMatchObject({ prompt: 5, completion: 2, estimated: false });
  });

  it('a refused admission sends nothing to a vendor, and is recorded as refused', async () => {
    const t = setup({ refuse: true });
    t.routeTo(['a']);
    const { exchange, done } = t.serve(t.chatSpec, { model: 'model' });
    await expect(done).rejects.toMatchObject({ code: 'rate_limit_exceeded', status: 429 });
    expect(t.calls).toEqual([]);
    expect(exchange).toMatchObject({ limitRejected: true, upstreamStartedAt: undefined });
    expect(exchange.recordId).toEqual(expect.any(String));
  });

  it('admits a vendor before calling it, but starts a local model first and cancels it when the admission refuses', async () => {
    const vendor = setup();
    vendor.routeTo(['a']);
    const sent = vendor.scripts;
    sent.set('a', [
      async () => {
        vendor.order.push('call');
        return answer(completion('ok'));
      },
    ]);
    await vendor.serve(vendor.chatSpec, { model: 'model' }).done;
    expect(vendor.order).toEqual(['admit', 'call']);

    const local = setup({ cancelsAtNoCost: ['local'], refuse: true });
    local.routeTo(['local']);
    local.scripts.set('local', [
      (signal) => {
        local.order.push('call');
        return hangs(signal);
      },
    ]);
    const { exchange, done } = local.serve(local.chatSpec, { model: 'model' });
    await expect(done).rejects.toMatchObject({ code: 'rate_limit_exceeded' });
    expect(local.order).toEqual(['call', 'admit']);
    expect(local.signals.get('local')?.aborted).toBe(true);
    expect(exchange.upstreamStartedAt).toBeUndefined(); // withdrawn: the refused request made no call
  });

  it.each([
    ['an abort', hangs],
    [
      'a failure worth another call',
      ((signal) =>
        hangs(signal).catch(() =>
          Promise.reject(new GatewayException('upstream_unreachable', 'cut')),
        )) as Script,
    ],
  ])(
    'a client that leaves mid-call (the call ends in %s) aborts it, is not retried, and bills the prompt as an estimate',
    async (_name, script) => {
      const t = setup();
      t.routeTo(['a', 'b']);
      t.scripts.set('a', [script]);
      const { exchange, res, done, counted } = t.serve(t.chatSpec, { model: 'model' });
      await new Promise<void>((resolve) => {
        const wait = () => (t.calls.length ? resolve() : setImmediate(wait));
        wait();
      });
      res.leave();
      await expect(done).rejects.toBeInstanceOf(Error);
      expect(t.signals.get('a')?.aborted).toBe(true);
      expect(t.calls).toEqual(['a']);
      expect(exchange.aborted).toBe(true);
      expect(counted).toHaveBeenCalledTimes(1);
      expect(exchange.tokens).toEqual({ prompt: 11, completion: 0, reasoning: 0, estimated: true });
    },
  );

  it('embeddings run on the same pipeline: admitted, deployments without embeddings passed over, inputs counted', async () => {
    const t = setup();
    t.routeTo(['chatonly', 'embed'], 'embedding');
    t.scripts.set('embed', [
      async () =>
        answer({ object: 'list', data: [{ object: 'embedding', index: 0, embedding: [1] }], model: 'u' }),
    ]);
    const { exchange, res, done } = t.serve(t.embeddingSpec, { model: 'model', input: 'hello' });
    await done;
    expect(t.order).toEqual(['admit']);
    expect(t.calls).toEqual(['embed']);
    expect(exchange).toMatchObject({ endpoint: 'embeddings', backend: 'embed', attempts: 1 });
    expect(exchange.tokens).toEqual({ prompt: 11, completion: 0, reasoning: 0, estimated: true });
    expect(JSON.parse(res.body!)).toMatchObject({ model: 'model', usage: { prompt_tokens: 11 } });
  });

  it('a model of the wrong kind is a 400 before any admission or call', async () => {
    const t = setup();
    t.routeTo(['embed'], 'embedding');
    const { done } = t.serve(t.chatSpec, { model: 'model' });
    await expect(done).rejects.toMatchObject({ status: 400, wireCode: 'model_not_supported' });
    expect(t.order).toEqual([]);
    expect(t.calls).toEqual([]);
  });

  it('builds the upstream call of each big body on a turn of its own, though their admissions answer together', async () => {
    // Four 15 MB one-string prompts: few values, many bytes. Their admissions' replies come in one read from Redis;
    // each call's build splices or serialises the whole body (~1 ms a MB), so unpaced they ran back to back.
    const big = () => {
      const body = { model: 'model' };
      noteBodyShape(body, { values: 5, bytes: 15 * PACED_BODY_BYTES });
      return body;
    };
    expect(await buildTurns([big(), big(), big(), big()])).toEqual([1, 1, 1, 1]); // one build a turn
    // Small bodies go straight through: their builds run in the turn their admissions answered (what the fake
    // admission makes happen: so the count above is the pacing's, not the fake's).
    expect(await buildTurns([0, 1, 2, 3].map(() => ({ model: 'model' })))).toEqual([4]);
  });
});

/** How many upstream calls were built in each turn of the event loop that built any, when `bodies` come at once. */
async function buildTurns(bodies: Array<{ model: string }>): Promise<number[]> {
  const turns = countTurns(); // bumped once per turn of the event loop
  let admissionsAnswer!: () => void;
  const builtIn = new Map<number, number>();
  const t = setup({
    admitAfter: new Promise((resolve) => (admissionsAnswer = resolve)),
    onBuild: () => builtIn.set(turns.now, (builtIn.get(turns.now) ?? 0) + 1),
  });
  t.routeTo(['a']);
  const served = bodies.map((body) => t.serve(t.chatSpec, body));
  await new Promise((resolve) => setImmediate(resolve)); // every request waits on its admission
  admissionsAnswer();
  await Promise.all(served.map((request) => request.done));
  turns.stop();
  return [...builtIn.values()];
}
