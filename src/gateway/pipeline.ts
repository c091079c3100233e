import { randomUUID } from 'node:crypto';
import type { ServerResponse } from 'node:http';
import { Injectable } from '@nestjs/common';
import type { Request, Response } from 'express';
import { GatewayConfig } from '../config/config.schema';
import { GatewayException } from '../core/errors/gateway.exception';
import { toGatewayException } from '../core/errors/error-response';
import { CACHE_WRITE_1H, type Usage } from '../core/openai-types';
import { AppLogger } from '../common/logging/logger';
import { clientSource } from '../common/http/client-source';
import { isPacedBody, nextTurn } from '../common/http/json-shape';
import { requestAbortSignal } from '../common/http/request-abort';
import { writeJson, writeJsonText } from '../common/http/write-json';
import { InFlightTracker } from '../lifecycle/in-flight.tracker';
import { PriceBook } from '../billing/price-book';
import type { Backend, UpstreamCall } from '../providers/provider-adapter';
import { sendToBackend } from '../providers/backend-call';
import { AbortedWithUsage, replyError, type UpstreamResponse } from '../providers/upstream-client';
import { isUpstreamFailure } from '../providers/upstream-errors';
import { ModelRouter, type Route } from '../routing/model-router.service';
import type { CachedAnswer } from '../response-cache/cached-answer';
import type { CachedRequest } from '../response-cache/cached-request';
import { replayAnswer } from '../response-cache/replay';
import { ResponseCache } from '../response-cache/response-cache.service';
import { StreamRelay, type RelayOutcome } from '../streaming/stream-relay.service';
import type { StreamEncoder } from '../streaming/stream-encoder';
import { TokenCounter } from '../usage/token-counter';
import { promptTexts, reservationEstimate, type PromptTexts } from '../usage/token-estimator';
import { chatRuleBreak, checkChatRules, requestFor } from './chat-rules';
import type {
  Answer,
  ChatServed,
  ClientCall,
  CountServed,
  EmbeddingServed,
  EndpointSpec,
  Served,
} from './endpoint-spec';
import type { Exchange, TokenCounts } from './exchange';
import { RequestAdmission } from './request-admission';
import type { RequestTrace, TracedCall } from './request-trace';
import { attemptRecords, UpstreamCaller, type CallSequence, type Candidate } from './upstream-caller';

/** A request that is sent to a model: a completion or embeddings. */
type Called = ChatServed | EmbeddingServed;

/** The call that answered 2xx, and how many calls it took. */
interface Answered {
  response: UpstreamResponse;
  candidate: Candidate;
  calls: number;
}

/**
 * The one request path of every endpoint: the endpoint's spec reads the request (`open`), then the pipeline
 * routes it, admits it against the team's limits, calls the backend through the plan the UpstreamCaller hands out
 * (retries, fallbacks), answers (a whole body, or a relayed stream) and counts its tokens. It is the only writer
 * of the request's Exchange from routing on; the usage recorder writes the one usage record from it when the
 * response closes, however it ended.
 */
@Injectable()
export class Pipeline {
  constructor(
    private readonly router: ModelRouter,
    private readonly relay: StreamRelay,
    private readonly config: GatewayConfig,
    private readonly counter: TokenCounter,
    private readonly admission: RequestAdmission,
    private readonly caller: UpstreamCaller,
    private readonly prices: PriceBook,
    private readonly inFlight: InFlightTracker,
    private readonly logger: AppLogger,
    private readonly responseCache: ResponseCache,
  ) {}

  /**
   * Serves one request to `spec`'s endpoint; the handler's whole work (the usage record waits for it). Not async:
   * it hands `handle`'s promise back instead of awaiting it, one suspended frame fewer for a stream's whole life.
   */
  serve<Body extends object>(
    spec: EndpointSpec<Body>,
    body: Body,
    req: Request,
    res: Response,
  ): Promise<void> {
    const exchange = req.exchange;
    if (spec.billedAs) {
      exchange.operation(spec.billedAs);
      exchange.streaming(isStream(body));
    }
    if (spec.requestIdHeader) res.setHeader(spec.requestIdHeader, exchange.requestId);
    const signal = requestAbortSignal(req, res, this.inFlight.cutSignal);
    const handling = this.handle(spec, body, req, res, signal);
    exchange.holdUsage(handling); // the usage record waits for what this request relayed to be counted
    return handling;
  }

  private async handle<Body extends object>(
    spec: EndpointSpec<Body>,
    body: Body,
    req: Request,
    res: Response,
    signal: AbortSignal,
  ): Promise<void> {
    const exchange = req.exchange;
    const client: ClientCall = {
      caller: exchange.caller,
      headers: req.headers,
      source: spec.keepsClientBytes ? clientSource(req) : undefined,
      response: res,
    };
    const opened = spec.open(body, client);
    // Awaited only when it is a promise: an await of a plain value still costs a turn of the microtask queue.
    const served = opened instanceof Promise ? await opened : opened;
    if (served.kind === 'count') return this.count(served, exchange, res, signal);
    const route = this.route(served, exchange);
    const cache = this.responseCache.open(
      route.model,
      route.config.responseCache,
      exchange.caller,
      { endpoint: spec.path, body, headers: req.headers },
      res,
    );
    const hit = cache && (await cache.lookup()); // no await (a microtask turn) for a model without a cache
    if (hit) return this.answerFromCache(hit, cache, served, route, exchange, res);
    const total = this.caller.deadline(route, signal);
    const paced = isPacedBody(body);
    if (served.kind === 'chat' && served.request.stream === true)
      // Handed back, not awaited: this frame (its registers hold the body, the route, the client's call) is not
      // kept suspended for the stream's whole life (docs/performance.md, held streams).
      return this.stream(
        served,
        route,
        exchange,
        res,
        total.signal,
        paced,
        () => forgetClientBytes(req, client, served),
        cache,
      ).finally(total.clear);
    try {
      const reply =
        served.kind === 'embedding'
          ? await this.embed(served, route, exchange, res, total.signal, paced)
          : served.reply(
              await this.complete(served, route, exchange, res, total.signal, paced, () =>
                forgetClientBytes(req, client, served),
              ),
            );
      const text = JSON.stringify(reply instanceof Promise ? await reply : reply);
      writeJsonText(res, text);
      cache?.storeWhole(text, { tokens: exchange.tokens, servedModel: exchange.servedModel });
    } finally {
      total.clear();
    }
  }

  /** Resolves the model for the caller and checks it serves this kind of request (and a chat request's rules). */
  private route(served: Served, exchange: Exchange): Route {
    const model = served.kind === 'count' ? served.model : served.request.model;
    const route = this.router.resolve(model, exchange.caller);
    exchange.routed(model, route.backend.id, route.deployments[0].upstreamModel);
    const wanted = served.kind === 'embedding' ? 'embedding' : 'chat';
    if (route.config.kind !== wanted) throw wrongKind(served, model);
    if (served.kind === 'chat')
      checkChatRules(served.request, served.wire, model, route.config, route.deployments[0]);
    return route;
  }

  /**
   * A response cache hit: admitted like any request (it counts as one; its tokens are recorded but settle to none
   * against token limits, its cost to 0), then the stored answer is replayed; no backend is called.
   */
  private async answerFromCache(
    hit: CachedAnswer,
    cache: CachedRequest,
    served: Called,
    route: Route,
    exchange: Exchange,
    res: ServerResponse,
  ): Promise<void> {
    const prompt =
      served.kind === 'embedding'
        ? () => served.prompt
        : memo(() => promptTexts(served.request.messages, served.request.tools));
    await this.admit(served, route, exchange, res, prompt);
    cache.served();
    exchange.answeredFromCache(hit.servedModel);
    exchange.counted(hit.tokens);
    res.setHeader('x-switchyard-model', hit.servedModel);
    replayAnswer(hit, res);
  }

  // Admission and the calls.

  /**
   * Admits the request and starts its calls; resolves once admitted, with the calls under way (a refusal throws
   * here; the last backend failure, after retries and fallbacks, when `result` is awaited). A first deployment
   * whose client `cancelsAtNoCost` (a local model) is started before the admission, so its prompt evaluation
   * overlaps the admission's Redis round trip (measured in bench/local-model.mjs); nothing it produces reaches the
   * client before the admission, and a refusal cancels it. A vendor is always admitted first: it may bill a prompt
   * it has received. `paced` (a big body, json-shape.ts isPacedBody): each call is built on a turn of its own.
   */
  private async admitAndStart(
    served: Called,
    route: Route,
    exchange: Exchange,
    res: ServerResponse,
    prompt: () => PromptTexts,
    signal: AbortSignal,
    paced: boolean,
  ): Promise<{ result: Promise<Answered> }> {
    const calls = this.caller.calls(route, signal, exchange.requestId);
    this.excludeWhatItCannotTake(served, route, calls);
    const first = calls.plan[0];
    if (!first.deployment.backend.client.cancelsAtNoCost) {
      await this.admit(served, route, exchange, res, prompt);
      exchange.callStarted();
      return { result: this.callUntilAnswered(served, calls, exchange, signal, paced) };
    }
    const refused = new AbortController();
    exchange.callStarted();
    const started = this.sendOnItsTurn(
      served,
      first,
      AbortSignal.any([signal, refused.signal]),
      paced,
      exchange.trace,
    );
    started.catch(() => undefined); // awaited by callUntilAnswered once admitted; moot if the admission refuses
    try {
      await this.admit(served, route, exchange, res, prompt);
    } catch (error) {
      refused.abort();
      exchange.callWithdrawn();
      throw error;
    }
    return { result: this.callUntilAnswered(served, calls, exchange, signal, paced, started) };
  }

  /** The candidates of the plan this request cannot go to, with why (a fallback's vendor rules, no embeddings). */
  private excludeWhatItCannotTake(served: Called, route: Route, calls: CallSequence): void {
    for (const candidate of calls.plan) {
      const { routed, deployment } = candidate;
      let reason: string | undefined;
      if (served.kind === 'embedding') {
        if (!deployment.backend.adapter.buildEmbeddingRequest)
          reason = 'its backend does not serve embeddings';
      } else if (routed !== route || deployment !== route.deployments[0]) {
        // The route's first deployment was checked by `route` (a 400 there); the others are passed over.
        reason = chatRuleBreak(served.request, served.wire, routed.model, routed.config, deployment);
      }
      if (reason !== undefined) calls.exclude(candidate, reason);
    }
  }

  /** One call after another until one answers 2xx; the exchange says which was tried last if none did. */
  private async callUntilAnswered(
    served: Called,
    calls: CallSequence,
    exchange: Exchange,
    signal: AbortSignal,
    paced: boolean,
    started?: Promise<UpstreamResponse>,
  ): Promise<Answered> {
    try {
      for (let candidate = calls.next(); candidate; candidate = calls.next()) {
        try {
          if (calls.mustWait) await calls.backoff(); // a retry of a deployment already called
          const response = await (started && calls.isFirst(candidate)
            ? started
            : this.sendOnItsTurn(served, candidate, signal, paced, exchange.trace));
          calls.answered(candidate, response.status);
          exchange.attempted(attemptRecords(calls.attempts));
          return { response, candidate, calls: calls.calls };
        } catch (error) {
          exchange.trace?.callFailed(error);
          calls.failed(candidate, error); // throws when nothing more may be tried
        }
      }
      throw calls.exhausted();
    } catch (error) {
      exchange.attempted(attemptRecords(calls.attempts));
      const last = calls.lastCalled;
      if (last)
        exchange.triedWithoutAnswer({
          backend: last.backend.id,
          upstreamModel: last.upstreamModel,
          attempts: calls.calls,
        });
      throw error;
    }
  }

  /** What the request reserves: its prompt plus the completion it may generate (times `n`); embeddings: inputs only. */
  private async admit(
    served: Called,
    route: Route,
    exchange: Exchange,
    res: ServerResponse,
    prompt: () => PromptTexts,
  ): Promise<void> {
    const first = route.deployments[0];
    const recordId = randomUUID();
    exchange.assignRecordId(recordId);
    const chat = served.kind === 'chat' ? served.request : undefined;
    try {
      const admitted = await this.admission.admit(exchange, res, {
        caller: exchange.caller,
        recordId,
        price: this.prices.priceOf({
          model: route.model,
          backend: first.backend.id,
          upstreamModel: first.upstreamModel,
        }),
        model: served.request.model,
        stream: chat?.stream === true,
        promptEstimate: () =>
          (served.kind === 'embedding' ? served.exactTokens : undefined) ?? reservationEstimate(prompt()),
        completionAllowance: chat
          ? (chat.max_completion_tokens ??
              chat.max_tokens ??
              this.config.limits.defaultCompletionReservation) * (chat.n ?? 1)
          : 0,
      });
      exchange.admitted(recordId, admitted.reservation, admitted.concurrencyKeys);
    } catch (error) {
      if (error instanceof GatewayException && error.status === 429) exchange.refused();
      throw error;
    }
  }

  /**
   * `send`, for a big body on a turn of the event loop of its own (json-shape.ts nextTurn): building the call
   * serialises or splices the whole body, ~1 ms per MB, and the calls of concurrent requests become due together
   * (their admissions' replies come in one read from Redis; failures of one backend together), so unpaced they
   * would run back to back in one turn.
   */
  private async sendOnItsTurn(
    served: Called,
    candidate: Candidate,
    signal: AbortSignal,
    paced: boolean,
    trace: RequestTrace | undefined,
  ): Promise<UpstreamResponse> {
    if (paced) await nextTurn();
    return this.send(served, candidate, signal, trace);
  }

  /**
   * One call to one candidate: the endpoint's native request, or the family's translation of the canonical one. A
   * traced request's call starts its span here, which adds the call's `traceparent` header (every family sends the
   * headers it was given).
   */
  private send(
    served: Called,
    candidate: Candidate,
    signal: AbortSignal,
    trace: RequestTrace | undefined,
  ): Promise<UpstreamResponse> {
    const { deployment, routed } = candidate;
    const { backend, upstreamModel } = deployment;
    if (served.kind === 'embedding') {
      const call = backend.adapter.buildEmbeddingRequest!(served.request, {
        upstreamModel,
        model: routed.config,
      });
      trace?.calling(call, tracedCall(served, candidate));
      return sendToBackend(backend, call, signal);
    }
    const { request, wire } = served;
    const stream = request.stream === true;
    let call: UpstreamCall;
    try {
      call = wire.native?.accepts(deployment)
        ? wire.native.call(deployment, stream)
        : backend.adapter.buildRequest(
            requestFor(request, wire, routed.config, deployment),
            { upstreamModel, model: routed.config },
            stream,
            wire.source,
          );
    } catch (error) {
      // Building the call failed before anything was sent: the gateway's fault (a GatewayException the adapter
      // threw says otherwise, e.g. a 400 for the client's input), never the backend's, so it must not become
      // `upstream_unreachable` (502) on its way out, nor count against the deployment.
      return Promise.reject(toGatewayException(error, this.logger.pino));
    }
    const timeouts = routed.config.timeouts;
    if (timeouts?.firstByteMs !== undefined || timeouts?.idleMs !== undefined)
      call.timeouts = { firstByteMs: timeouts.firstByteMs, idleMs: timeouts.idleMs };
    trace?.calling(call, tracedCall(served, candidate));
    return sendToBackend(backend, call, signal);
  }

  /** The deployment that answered: named in the response headers and the usage record. */
  private answeredBy(answered: Answered, exchange: Exchange, res: ServerResponse): Backend {
    const { deployment, routed } = answered.candidate;
    exchange.answered({
      backend: deployment.backend.id,
      upstreamModel: deployment.upstreamModel,
      servedModel: routed.model,
      attempts: answered.calls,
    });
    res.setHeader('x-switchyard-model', routed.model);
    res.setHeader('x-switchyard-backend', deployment.backend.id);
    res.setHeader('x-switchyard-attempts', String(answered.calls));
    return deployment.backend;
  }

  // The answer, by kind.

  /**
   * Non-streaming: the answer as an OpenAI chat.completion (and the upstream's body, for a native call).
   * `answered` runs once a deployment has answered: no other call will be built for this request.
   */
  private async complete(
    served: ChatServed,
    route: Route,
    exchange: Exchange,
    res: ServerResponse,
    signal: AbortSignal,
    paced: boolean,
    answered: () => void,
  ): Promise<Answer> {
    const { request, wire } = served;
    const prompt = memo(() => promptTexts(request.messages, request.tools));
    const call = await this.admitAndStart(served, route, exchange, res, prompt, signal, paced);
    let body: unknown;
    let native: boolean;
    let completion: Answer['completion'];
    let backend = route.backend; // the answering deployment's, once known
    let replied = false; // the backend answered: later failures are its reply's, not reaching it
    try {
      const reply = await call.result;
      backend = this.answeredBy(reply, exchange, res);
      answered();
      native = wire.native?.accepts(reply.candidate.deployment) === true;
      replied = true;
      body = await reply.response.body.json();
      exchange.callEnded();
      completion = backend.adapter.parseResponse(body, native ? wire.native?.api : undefined);
      if (!Array.isArray(completion?.choices)) throw new TypeError('no choices in the reply');
    } catch (error) {
      exchange.callEnded();
      // The client left while the backend was working: the prompt was spent; the answer is unknown, unless the
      // backend reported what it had generated (a local model does).
      if (signal.aborted)
        exchange.counted(
          error instanceof AbortedWithUsage && error.usage
            ? countsFrom(error.usage)
            : await this.promptOnly(prompt()),
        );
      const mapped = replied
        ? replyError(backend.id, error)
        : error instanceof GatewayException
          ? error
          : backend.client.transportError(error);
      throw this.failure(exchange, signal, mapped);
    }
    completion.model = request.model;
    if (exchange.caller.keepsContent)
      exchange.answerForLog(completion.choices.map((choice) => choice.message));
    const reasoning = completion.choices
      .map((choice) => choice.message.reasoning_content)
      .filter((text): text is string => typeof text === 'string' && text !== '');
    if (completion.usage) {
      const reasoningCounted = await this.counter.fillReasoningTokens(completion.usage, reasoning);
      exchange.counted({ ...countsFrom(completion.usage), estimated: reasoningCounted });
    } else {
      exchange.counted(
        await this.estimated(prompt(), [
          ...completion.choices.map((choice) => String(choice.message.content ?? '')),
          ...reasoning,
        ]),
      );
    }
    return { completion, upstreamBody: body, native, backendId: backend.id };
  }

  /**
   * Streaming: relays to `res`; errors before the first byte are thrown as normal HTTP errors. `answered` runs once
   * a deployment has answered: no other call will be built for this request.
   */
  private async stream(
    served: ChatServed,
    route: Route,
    exchange: Exchange,
    res: ServerResponse,
    signal: AbortSignal,
    paced: boolean,
    answeredFirst: () => void,
    cache?: CachedRequest,
  ): Promise<void> {
    const { request, wire } = served;
    const prompt = memo(() => promptTexts(request.messages, request.tools));
    const call = await this.admitAndStart(served, route, exchange, res, prompt, signal, paced);
    let answered: Answered;
    try {
      answered = await call.result;
    } catch (error) {
      exchange.callEnded();
      // Left (or cut) before the backend's headers: the prompt was sent and may be billed, so it is accounted
      // (estimated), as for a non-streaming request; otherwise aborting early would be a way around token limits.
      if (signal.aborted) exchange.counted(await this.promptOnly(prompt()));
      throw this.failure(exchange, signal, error);
    }
    const backend = this.answeredBy(answered, exchange, res);
    answeredFirst();
    const deployment = answered.candidate.deployment;
    const native = wire.native?.accepts(deployment) === true;
    const encoder = cache
      ? cache.recording(wire.streamEncoder(deployment, native))
      : wire.streamEncoder(deployment, native);
    const relayed = this.relay.relay({
      res,
      events: backend.adapter.decodeStream(answered.response.body, {
        request,
        native: native ? wire.native?.api : undefined,
      }),
      backendId: backend.id,
      encoder,
      signal,
    });
    // Continued once relayed rather than awaited here: a suspended frame would keep every register of this one
    // (the plan, the call, the route) for the stream's whole life; the continuation keeps only what it reads.
    return relayed.then((outcome) =>
      this.streamEnded(outcome, served, exchange, res, encoder, prompt, cache),
    );
  }

  /** A relayed stream's end: its accounting (the upstream's usage, else the gateway's count), then its last events. */
  private async streamEnded(
    outcome: RelayOutcome,
    served: ChatServed,
    exchange: Exchange,
    res: ServerResponse,
    encoder: StreamEncoder,
    prompt: () => PromptTexts,
    cache: CachedRequest | undefined,
  ): Promise<void> {
    const { wire } = served;
    exchange.callEnded();
    exchange.firstToken(outcome.firstTokenAt);
    if (exchange.caller.keepsContent)
      exchange.answerForLog([{ role: 'assistant', content: outcome.relayedText.join('') }]);
    if (outcome.error) {
      exchange.failed(outcome.error.wireCode ?? outcome.error.code);
      if (isUpstreamFailure(outcome.error)) exchange.upstreamFailed(outcome.error.code);
    }
    if (outcome.aborted) exchange.clientLeft();
    if (outcome.usage)
      exchange.counted({ ...countsFrom(outcome.usage), estimated: outcome.reasoningEstimated === true });
    else {
      // No usage from upstream (client left, stream broke, or a server that never sends it): count it ourselves
      // (large texts in the token counter's worker thread, so this never stalls the event loop).
      const counts = await this.estimated(prompt(), outcome.relayedText);
      exchange.counted(counts);
      // Encoders that close with the usage (Messages' message_delta) report what was accounted.
      outcome.usage = {
        prompt_tokens: counts.prompt,
        completion_tokens: counts.completion,
        total_tokens: counts.prompt + counts.completion,
      };
    }
    await wire.beforeStreamEnd?.(outcome);
    this.relay.finish(res, outcome, encoder);
    if (outcome.completed) cache?.storeStream({ tokens: exchange.tokens, servedModel: exchange.servedModel });
  }

  /** Embeddings: the answer in OpenAI's shape with the model name the client asked for, its inputs counted. */
  private async embed(
    served: EmbeddingServed,
    route: Route,
    exchange: Exchange,
    res: ServerResponse,
    signal: AbortSignal,
    paced: boolean,
  ): Promise<unknown> {
    const prompt = () => served.prompt;
    const call = await this.admitAndStart(served, route, exchange, res, prompt, signal, paced);
    let backend = route.backend;
    let replied = false;
    try {
      const answered = await call.result;
      backend = this.answeredBy(answered, exchange, res);
      replied = true;
      const reply = backend.adapter.parseEmbeddingResponse!(await answered.response.body.json());
      exchange.callEnded();
      reply.model = served.request.model;
      const promptTokens = reply.usage?.prompt_tokens;
      if (promptTokens !== undefined)
        exchange.counted({ prompt: promptTokens, completion: 0, reasoning: 0, estimated: false });
      else {
        const counted = served.exactTokens ?? (await this.counter.prompt(served.prompt));
        exchange.counted({ prompt: counted, completion: 0, reasoning: 0, estimated: true });
        reply.usage = { prompt_tokens: counted, total_tokens: counted };
      }
      return served.reply(reply);
    } catch (error) {
      exchange.callEnded();
      // Sent but left (or cut) before the answer: the inputs were spent; they are billed (estimated).
      if (signal.aborted)
        exchange.counted({
          prompt: served.exactTokens ?? (await this.counter.prompt(served.prompt)),
          completion: 0,
          reasoning: 0,
          estimated: true,
        });
      throw this.failure(exchange, signal, replied ? replyError(backend.id, error) : error);
    }
  }

  /**
   * Counting a prompt (count_tokens): routed like a completion, not admitted, not retried (nothing is generated or
   * billed): exact from the first deployment when its family counts natively, else the gateway's tokenizer.
   */
  private async count(
    served: CountServed,
    exchange: Exchange,
    res: Response,
    signal: AbortSignal,
  ): Promise<void> {
    const route = this.route(served, exchange);
    const deployment = route.deployments[0];
    const call = served.nativeCall(deployment);
    if (call) {
      const upstream = await sendToBackend(deployment.backend, call, signal);
      const counted = (await upstream.body.json()) as { input_tokens?: unknown };
      if (typeof counted?.input_tokens === 'number') {
        writeJson(res, served.reply({ tokens: counted.input_tokens, estimated: false }));
        return;
      }
    }
    writeJson(res, served.reply({ tokens: await this.counter.prompt(served.prompt()), estimated: true }));
  }

  /** The error the client gets: the gateway's own reason for cutting the request, else the failure; noted if upstream. */
  private failure(exchange: Exchange, signal: AbortSignal, error: unknown): unknown {
    const failure = cutByGateway(signal) ?? error;
    if (failure instanceof GatewayException && isUpstreamFailure(failure))
      exchange.upstreamFailed(failure.code);
    return failure;
  }

  /** The prompt was sent but nothing is known of the answer (the client left, the gateway cut it). */
  private async promptOnly(prompt: PromptTexts): Promise<TokenCounts> {
    return { prompt: await this.counter.prompt(prompt), completion: 0, reasoning: 0, estimated: true };
  }

  /** Counts worked out by the gateway for an answer that came without usage. */
  private async estimated(prompt: PromptTexts, generated: string[]): Promise<TokenCounts> {
    const [promptTokens, completionTokens] = await Promise.all([
      this.counter.prompt(prompt),
      this.counter.texts([generated.join('')]),
    ]);
    return { prompt: promptTokens, completion: completionTokens, reasoning: 0, estimated: true };
  }
}

/**
 * Once a deployment has answered, the client's body bytes (kept for pass-through families to copy from) are no
 * longer needed: nothing else is sent for this request. Dropped, they are not held for the life of a stream beside
 * the parsed body (an agent's conversation is often hundreds of KB; docs/performance.md, held streams).
 */
function forgetClientBytes(req: Request, client: ClientCall, served: ChatServed): void {
  req.rawBody = undefined;
  client.source = undefined;
  served.wire.source = undefined;
}

/** A call as its span names it (built only for a traced request). */
function tracedCall(served: Called, candidate: Candidate): TracedCall {
  return {
    operation: served.kind === 'embedding' ? 'embeddings' : 'chat',
    deployment: candidate.deployment,
    model: candidate.routed.model,
    fallback: candidate.fallback,
    chat: served.kind === 'chat' ? served.request : undefined,
  };
}

/** The gateway's own reason for aborting (the shutdown's deadline, the total timeout), if that is why the signal fired. */
export function cutByGateway(signal: AbortSignal): GatewayException | undefined {
  return signal.aborted && signal.reason instanceof GatewayException ? signal.reason : undefined;
}

function wrongKind(served: Served, model: string): GatewayException {
  if (served.kind === 'count')
    return new GatewayException(
      'invalid_request',
      `The model \`${model}\` is an embedding model: it takes no messages.`,
      {
        param: 'model',
        wireCode: null,
      },
    );
  return new GatewayException(
    'invalid_request',
    served.kind === 'embedding'
      ? `The model \`${model}\` is a chat model: call POST /v1/chat/completions with it.`
      : `The model \`${model}\` is an embedding model: call POST /v1/embeddings with it.`,
    { param: 'model', wireCode: 'model_not_supported' },
  );
}

/** Whether the client asked for a stream (`stream: true` in its body). */
function isStream(body: object): boolean {
  return (body as { stream?: unknown }).stream === true;
}

function countsFrom(usage: Usage): TokenCounts {
  return {
    prompt: usage.prompt_tokens,
    completion: usage.completion_tokens,
    reasoning: usage.completion_tokens_details?.reasoning_tokens ?? 0,
    cached: usage.prompt_tokens_details?.cached_tokens ?? 0,
    cacheWrite: usage.prompt_tokens_details?.cache_write_tokens ?? 0,
    cacheWrite1h: usage.prompt_tokens_details?.[CACHE_WRITE_1H] ?? 0,
    estimated: false,
  };
}

function memo<T>(compute: () => T): () => T {
  let value: T | undefined;
  return () => (value ??= compute());
}
