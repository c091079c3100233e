import { Injectable } from '@nestjs/common';
import type { ServerResponse } from 'node:http';
import { GatewayConfig } from '../config/config.schema';
import { GatewayException } from '../core/errors/gateway.exception';
import { toGatewayException } from '../core/errors/error-response';
import { AppLogger } from '../common/logging/logger';
import type { RequestLedger, TokenCounts } from './request-ledger';
import type { ModelConfig } from '../config/config.schema';
import type { Backend, UpstreamCall } from '../providers/provider-adapter';
import { sendToBackend } from '../providers/backend-call';
import { ModelRouter, type Deployment, type Route } from '../routing/model-router.service';
import { UpstreamCaller, type CallResult, type Candidate } from './upstream-caller';
import type { ChatCompletion, Usage } from '../core/openai-types';
import { AbortedWithUsage, replyError, type UpstreamResponse } from '../providers/upstream-client';
import { isUpstreamFailure } from '../providers/upstream-errors';
import { StreamRelay } from '../streaming/stream-relay.service';
import { TokenCounter } from '../usage/token-counter';
import { RequestAdmission } from './request-admission';
import { PriceBook } from '../billing/price-book';
import { promptTexts, reservationEstimate, type PromptTexts } from '../usage/token-estimator';
import type { ChatRequest } from '../core/chat-request';
import type { ClientWire } from './client-wire';
import { MAX_TOOLS } from '../endpoints/chat-completions/dto/chat-completion-request.dto';

/** A whole (non-streamed) answer: the OpenAI completion it maps to, and the backend's own body for a native call. */
export interface Answer {
  completion: ChatCompletion;
  /** The upstream's 2xx body as it came (the client's own format when `native`). */
  upstreamBody: unknown;
  native: boolean;
}

/**
 * Routes a validated chat request, admits it against the team's limits, calls the
 * backend, and counts its tokens on the request's ledger (the usage recorder
 * writes them when the response closes, however it ends).
 */
@Injectable()
export class ChatService {
  constructor(
    private readonly router: ModelRouter,
    private readonly relay: StreamRelay,
    private readonly config: GatewayConfig,
    private readonly counter: TokenCounter,
    private readonly admission: RequestAdmission,
    private readonly caller: UpstreamCaller,
    private readonly prices: PriceBook,
    private readonly logger: AppLogger,
  ) {}

  /** Non-streaming: the answer as an OpenAI chat.completion (and the upstream's body, for a native call). */
  async complete(
    dto: ChatRequest,
    wire: ClientWire,
    ledger: RequestLedger,
    res: ServerResponse,
    requestSignal: AbortSignal,
  ): Promise<Answer> {
    const route = this.route(dto, wire, ledger);
    const total = this.caller.deadline(route, requestSignal);
    try {
      return await this.completeRouted(route, dto, wire, ledger, res, total.signal);
    } finally {
      total.clear();
    }
  }

  private async completeRouted(
    route: Route,
    dto: ChatRequest,
    wire: ClientWire,
    ledger: RequestLedger,
    res: ServerResponse,
    signal: AbortSignal,
  ): Promise<Answer> {
    const prompt = memo(() => promptTexts(dto.messages, dto.tools));
    const call = await this.admitAndStart(route, dto, wire, ledger, res, prompt, false, signal);
    let completion: ChatCompletion;
    let body: unknown;
    let native: boolean;
    let backend = route.backend; // the answering deployment's, once known
    let replied = false; // the backend answered: later failures are its reply's, not reaching it
    try {
      const answered = await call.result;
      backend = this.answeredBy(answered, ledger, res);
      native = wire.native?.accepts(answered.candidate.deployment) === true;
      replied = true;
      body = await answered.response.body.json();
      ledger.callEnded();
      completion = backend.adapter.parseResponse(body, native ? wire.native?.api : undefined);
      if (!Array.isArray(completion?.choices)) throw new TypeError('no choices in the reply');
    } catch (error) {
      ledger.callEnded();
      // The client left while the backend was working: the prompt was spent; the answer is unknown, unless the
      // backend reported what it had generated (a local model does).
      if (signal.aborted)
        ledger.counted(
          error instanceof AbortedWithUsage && error.usage
            ? countsFrom(error.usage)
            : await this.promptOnly(prompt()),
        );
      const mapped = replied
        ? replyError(backend.id, error)
        : error instanceof GatewayException
          ? error
          : backend.client.transportError(error);
      const failure = cutByGateway(signal) ?? mapped;
      if (failure instanceof GatewayException && isUpstreamFailure(failure))
        ledger.upstreamFailed(failure.code);
      throw failure;
    }
    completion.model = dto.model;
    const reasoning = completion.choices
      .map((choice) => choice.message.reasoning_content)
      .filter((text): text is string => typeof text === 'string' && text !== '');
    if (completion.usage) {
      const reasoningCounted = await this.counter.fillReasoningTokens(completion.usage, reasoning);
      ledger.counted({ ...countsFrom(completion.usage), estimated: reasoningCounted });
    } else {
      ledger.counted(
        await this.estimated(prompt(), [
          ...completion.choices.map((choice) => String(choice.message.content ?? '')),
          ...reasoning,
        ]),
      );
    }
    return { completion, upstreamBody: body, native };
  }

  /** Streaming: relays SSE to `res`; errors before the first byte are thrown as normal HTTP errors. */
  async stream(
    dto: ChatRequest,
    wire: ClientWire,
    ledger: RequestLedger,
    res: ServerResponse,
    requestSignal: AbortSignal,
  ): Promise<void> {
    const route = this.route(dto, wire, ledger);
    const total = this.caller.deadline(route, requestSignal);
    try {
      await this.streamRouted(route, dto, wire, ledger, res, total.signal);
    } finally {
      total.clear();
    }
  }

  private async streamRouted(
    route: Route,
    dto: ChatRequest,
    wire: ClientWire,
    ledger: RequestLedger,
    res: ServerResponse,
    signal: AbortSignal,
  ): Promise<void> {
    const prompt = memo(() => promptTexts(dto.messages, dto.tools));
    const call = await this.admitAndStart(route, dto, wire, ledger, res, prompt, true, signal);
    let answered: CallResult;
    try {
      answered = await call.result;
    } catch (error) {
      ledger.callEnded();
      // Left (or cut) before the backend's headers: the prompt was sent and may be billed, so it is accounted
      // (estimated), as for a non-streaming request; otherwise aborting early would be a way around token limits.
      if (signal.aborted) ledger.counted(await this.promptOnly(prompt()));
      const failure = cutByGateway(signal) ?? error;
      if (failure instanceof GatewayException && isUpstreamFailure(failure))
        ledger.upstreamFailed(failure.code);
      throw failure;
    }
    const backend = this.answeredBy(answered, ledger, res);
    const deployment = answered.candidate.deployment;
    const native = wire.native?.accepts(deployment) === true;
    const encoder = wire.streamEncoder(deployment, native);
    const outcome = await this.relay.relay({
      res,
      events: backend.adapter.decodeStream(answered.response.body, {
        request: dto,
        native: native ? wire.native?.api : undefined,
      }),
      backendId: backend.id,
      encoder,
      signal,
    });
    ledger.callEnded();
    ledger.firstToken(outcome.firstTokenAt);
    if (outcome.error) {
      ledger.failed(outcome.error.wireCode ?? outcome.error.code);
      if (isUpstreamFailure(outcome.error)) ledger.upstreamFailed(outcome.error.code);
    }
    if (outcome.aborted) ledger.clientLeft();
    if (outcome.usage)
      ledger.counted({ ...countsFrom(outcome.usage), estimated: outcome.reasoningEstimated === true });
    else {
      // No usage from upstream (client left, stream broke, or a server that never sends it): count it ourselves
      // (large texts in the token counter's worker thread, so this never stalls the event loop).
      const counts = await this.estimated(prompt(), outcome.relayedText);
      ledger.counted(counts);
      // Encoders that close with the usage (Messages' message_delta) report what was accounted.
      outcome.usage = {
        prompt_tokens: counts.prompt,
        completion_tokens: counts.completion,
        total_tokens: counts.prompt + counts.completion,
      };
    }
    await wire.beforeStreamEnd?.(outcome);
    this.relay.finish(res, outcome, encoder);
  }

  /** Resolves the model and checks the request against its vendor rules (a 400 names the client's mistake). */
  private route(dto: ChatRequest, wire: ClientWire, ledger: RequestLedger): Route {
    const route = this.router.resolve(dto.model, ledger.principal!);
    ledger.routed(dto.model, route.backend.id, route.deployments[0].upstreamModel);
    if (route.config.kind !== 'chat') {
      throw new GatewayException(
        'invalid_request',
        `The model \`${dto.model}\` is an embedding model: call POST /v1/embeddings with it.`,
        { param: 'model', wireCode: 'model_not_supported' },
      );
    }
    this.checkRules(dto, wire, dto.model, route.config, route.deployments[0]);
    return route;
  }

  /**
   * The request's thinking and vendor rules against one deployment of a model; throws a 400 naming the rule.
   * A deployment that takes the client's request natively checks it itself.
   */
  private checkRules(
    dto: ChatRequest,
    wire: ClientWire,
    model: string,
    config: ModelConfig,
    deployment: Deployment,
  ): void {
    if (wire.native?.accepts(deployment)) return;
    const { backend, upstreamModel } = deployment;
    dto = requestFor(dto, wire, config, deployment);
    // A request from another API (Messages) translated to a chat completion keeps chat's limit (the chat DTO checks
    // a chat request's own); an Anthropic deployment that takes Messages natively has none it publishes.
    if (Array.isArray(dto.tools) && dto.tools.length > MAX_TOOLS) {
      throw new GatewayException(
        'invalid_request',
        `'tools' must have at most ${MAX_TOOLS} tools for the model \`${model}\` (OpenAI's limit per request, which a request translated to chat completions keeps).`,
        { param: 'tools', wireCode: null },
      );
    }
    if (dto.thinking?.type === 'enabled' && !canThink(config, deployment)) {
      throw new GatewayException(
        'invalid_request',
        `The model \`${model}\` does not support extended reasoning ('thinking').`,
        {
          param: 'thinking',
          wireCode: null,
        },
      );
    }
    backend.adapter.validate?.(dto, { upstreamModel, model: config });
  }

  /** Why a candidate cannot take this request (another deployment's or a fallback's vendor rules), if it cannot. */
  private ruleBreak(dto: ChatRequest, wire: ClientWire, candidate: Candidate): string | undefined {
    try {
      this.checkRules(dto, wire, candidate.routed.model, candidate.routed.config, candidate.deployment);
      return undefined;
    } catch (error) {
      return error instanceof Error ? error.message : String(error);
    }
  }

  /** The deployment that answered: named in the response headers and the usage record. */
  private answeredBy(answered: CallResult, ledger: RequestLedger, res: ServerResponse): Backend {
    const { deployment, routed } = answered.candidate;
    const attempts = answered.attempts.filter((a) => a.deployment !== '-').length;
    ledger.answered({
      backend: deployment.backend.id,
      upstreamModel: deployment.upstreamModel,
      servedModel: routed.model,
      attempts,
    });
    res.setHeader('x-switchyard-model', routed.model);
    res.setHeader('x-switchyard-backend', deployment.backend.id);
    res.setHeader('x-switchyard-attempts', String(attempts));
    return deployment.backend;
  }

  /** Admission and the backend calls, through the upstream-call seam (routing/upstream-caller.ts). */
  private admitAndStart(
    route: Route,
    dto: ChatRequest,
    wire: ClientWire,
    ledger: RequestLedger,
    res: ServerResponse,
    prompt: () => PromptTexts,
    stream: boolean,
    signal: AbortSignal,
  ): Promise<{ result: Promise<CallResult> }> {
    return this.caller.start({
      route,
      ledger,
      signal,
      admit: () => this.admit(route, dto, ledger, res, prompt),
      attempt: (candidate, callSignal) => this.send(candidate, dto, wire, stream, callSignal),
      skip: (candidate) => this.ruleBreak(dto, wire, candidate),
    });
  }

  /** The chat request's reservation: its prompt plus the completion it may generate (times `n`). */
  private admit(
    route: Route,
    dto: ChatRequest,
    ledger: RequestLedger,
    res: ServerResponse,
    prompt: () => PromptTexts,
  ): Promise<void> {
    const first = route.deployments[0];
    return this.admission.admit(ledger, res, {
      price: this.prices.priceOf({
        model: route.model,
        backend: first.backend.id,
        upstreamModel: first.upstreamModel,
      }),
      model: dto.model,
      stream: dto.stream === true,
      promptEstimate: () => reservationEstimate(prompt()),
      completionAllowance:
        (dto.max_completion_tokens ?? dto.max_tokens ?? this.config.limits.defaultCompletionReservation) *
        (dto.n ?? 1),
    });
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

  private send(
    candidate: Candidate,
    dto: ChatRequest,
    wire: ClientWire,
    stream: boolean,
    signal: AbortSignal,
  ): Promise<UpstreamResponse> {
    const { deployment, routed } = candidate;
    const { backend, upstreamModel } = deployment;
    let call: UpstreamCall;
    try {
      call = wire.native?.accepts(deployment)
        ? wire.native.call(deployment, stream)
        : backend.adapter.buildRequest(
            requestFor(dto, wire, routed.config, deployment),
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
    const timeouts = candidate.routed.config.timeouts;
    if (timeouts?.firstByteMs !== undefined || timeouts?.idleMs !== undefined)
      call.timeouts = { firstByteMs: timeouts.firstByteMs, idleMs: timeouts.idleMs };
    return sendToBackend(backend, call, signal);
  }
}

/** The gateway's own reason for aborting (the shutdown's deadline, the total timeout), if that is why the signal fired. */
export function cutByGateway(signal: AbortSignal): GatewayException | undefined {
  return signal.aborted && signal.reason instanceof GatewayException ? signal.reason : undefined;
}

function canThink(config: ModelConfig, deployment: Deployment): boolean {
  return config.thinking !== 'none' && deployment.backend.client.canThink?.() !== false;
}

/** The request as one deployment gets it: without `thinking` where the client's API sends it as a hint and the model cannot think. */
function requestFor(
  dto: ChatRequest,
  wire: ClientWire,
  config: ModelConfig,
  deployment: Deployment,
): ChatRequest {
  if (!wire.thinkingIsAHint || dto.thinking?.type !== 'enabled' || canThink(config, deployment)) return dto;
  return { ...dto, thinking: undefined };
}

function countsFrom(usage: Usage): TokenCounts {
  return {
    prompt: usage.prompt_tokens,
    completion: usage.completion_tokens,
    reasoning: usage.completion_tokens_details?.reasoning_tokens ?? 0,
    cached: usage.prompt_tokens_details?.cached_tokens ?? 0,
    estimated: false,
  };
}

function memo<T>(compute: () => T): () => T {
  let value: T | undefined;
  return () => (value ??= compute());
}
