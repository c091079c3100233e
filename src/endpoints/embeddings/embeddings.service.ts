import type { ServerResponse } from 'node:http';
import { Injectable } from '@nestjs/common';
import { GatewayException } from '../../core/errors/gateway.exception';
import type { EmbeddingResponse } from '../../core/embedding-request';
import type { Backend } from '../../providers/provider-adapter';
import { isUpstreamFailure } from '../../providers/upstream-errors';
import { replyError, type UpstreamResponse } from '../../providers/upstream-client';
import { sendToBackend } from '../../providers/backend-call';
import { ModelRouter } from '../../routing/model-router.service';
import { UpstreamCaller, type Candidate } from '../../gateway/upstream-caller';
import { RequestAdmission } from '../../gateway/request-admission';
import type { RequestLedger } from '../../gateway/request-ledger';
import { TokenCounter } from '../../usage/token-counter';
import { PriceBook } from '../../billing/price-book';
import { reservationEstimate, type PromptTexts } from '../../usage/token-estimator';
import type { EmbeddingRequestDto } from './dto/embedding-request.dto';

/**
 * POST /v1/embeddings through the same pipeline as chat: route (only `kind: embedding` models), admit (the
 * inputs' tokens, no completion), call through the upstream-call seam (deployments, retries, fallbacks), count
 * (the backend's prompt_tokens, or the gateway's count when it reports none), and answer in OpenAI's shape with
 * the model name the client asked for.
 */
@Injectable()
export class EmbeddingsService {
  constructor(
    private readonly router: ModelRouter,
    private readonly caller: UpstreamCaller,
    private readonly admission: RequestAdmission,
    private readonly counter: TokenCounter,
    private readonly prices: PriceBook,
  ) {}

  async embed(
    dto: EmbeddingRequestDto,
    ledger: RequestLedger,
    res: ServerResponse,
    requestSignal: AbortSignal,
  ): Promise<EmbeddingResponse> {
    const route = this.router.resolve(dto.model, ledger.principal!);
    ledger.routed(dto.model, route.backend.id, route.deployments[0].upstreamModel);
    if (route.config.kind !== 'embedding') {
      throw new GatewayException(
        'invalid_request',
        `The model \`${dto.model}\` is a chat model: call POST /v1/chat/completions with it.`,
        { param: 'model', wireCode: 'model_not_supported' },
      );
    }
    const prompt = inputTexts(dto.input);
    const total = this.caller.deadline(route, requestSignal);
    const signal = total.signal;
    let backend: Backend = route.backend;
    let replied = false;
    try {
      const call = await this.caller.start({
        route,
        ledger,
        signal,
        admit: () =>
          this.admission.admit(ledger, res, {
            price: this.prices.priceOf({
              model: route.model,
              backend: route.deployments[0].backend.id,
              upstreamModel: route.deployments[0].upstreamModel,
            }),
            model: dto.model,
            stream: false,
            promptEstimate: () => tokenArrays(dto.input) ?? reservationEstimate(prompt),
            completionAllowance: 0,
          }),
        attempt: (candidate, callSignal) => this.send(candidate, dto, callSignal),
        skip: (candidate) =>
          candidate.deployment.backend.adapter.buildEmbeddingRequest
            ? undefined
            : 'its backend does not serve embeddings',
      });
      const answered = await call.result;
      backend = answered.candidate.deployment.backend;
      const attempts = answered.attempts.filter((a) => a.deployment !== '-').length;
      ledger.answered({
        backend: backend.id,
        upstreamModel: answered.candidate.deployment.upstreamModel,
        servedModel: answered.candidate.routed.model,
        attempts,
      });
      res.setHeader('x-switchyard-model', answered.candidate.routed.model);
      res.setHeader('x-switchyard-backend', backend.id);
      res.setHeader('x-switchyard-attempts', String(attempts));
      replied = true;
      const reply = backend.adapter.parseEmbeddingResponse!(await answered.response.body.json());
      ledger.callEnded();
      reply.model = dto.model;
      if (dto.encoding_format === 'base64') encodeBase64(reply);
      const promptTokens = reply.usage?.prompt_tokens;
      if (promptTokens !== undefined)
        ledger.counted({ prompt: promptTokens, completion: 0, reasoning: 0, estimated: false });
      else {
        const counted = tokenArrays(dto.input) ?? (await this.counter.prompt(prompt));
        ledger.counted({ prompt: counted, completion: 0, reasoning: 0, estimated: true });
        reply.usage = { prompt_tokens: counted, total_tokens: counted };
      }
      return reply;
    } catch (error) {
      ledger.callEnded();
      // Sent but left (or cut) before the answer: the inputs were spent; they are billed (estimated).
      if (signal.aborted && ledger.upstreamStartedAt !== undefined)
        ledger.counted({
          prompt: tokenArrays(dto.input) ?? (await this.counter.prompt(prompt)),
          completion: 0,
          reasoning: 0,
          estimated: true,
        });
      const gatewayReason =
        signal.aborted && signal.reason instanceof GatewayException ? signal.reason : undefined;
      const failure = gatewayReason ?? (replied ? replyError(backend.id, error) : error);
      if (failure instanceof GatewayException && isUpstreamFailure(failure))
        ledger.upstreamFailed(failure.code);
      throw failure;
    } finally {
      total.clear();
    }
  }

  private send(
    candidate: Candidate,
    dto: EmbeddingRequestDto,
    signal: AbortSignal,
  ): Promise<UpstreamResponse> {
    const { backend, upstreamModel } = candidate.deployment;
    const call = backend.adapter.buildEmbeddingRequest!(dto, {
      upstreamModel,
      model: candidate.routed.config,
    });
    return sendToBackend(backend, call, signal);
  }
}

/** The inputs as texts to count (token arrays are counted by their length instead). */
function inputTexts(input: EmbeddingRequestDto['input']): PromptTexts {
  const texts =
    typeof input === 'string'
      ? [input]
      : input.every((item) => typeof item === 'string')
        ? (input as string[])
        : [];
  return { fixed: 0, texts };
}

/** Inputs given as tokens already: their count is exact. */
function tokenArrays(input: EmbeddingRequestDto['input']): number | undefined {
  if (typeof input === 'string' || input.length === 0 || typeof input[0] === 'string') return undefined;
  return Array.isArray(input[0])
    ? (input as number[][]).reduce((sum, tokens) => sum + tokens.length, 0)
    : input.length;
}

/**
 * OpenAI's `encoding_format: base64` (what its SDK asks for by default): each vector's little-endian float32
 * bytes. Families that answer floats (Gemini, local) are encoded here; OpenAI-compatible backends already did.
 */
function encodeBase64(reply: EmbeddingResponse): void {
  for (const item of reply.data) {
    if (Array.isArray(item.embedding))
      item.embedding = Buffer.from(new Float32Array(item.embedding).buffer).toString('base64');
  }
}
