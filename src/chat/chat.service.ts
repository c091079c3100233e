import { Injectable } from '@nestjs/common';
import type { Request, Response } from 'express';
import { GatewayException } from '../common/errors/gateway.exception';
import { ModelRouter, type Route } from '../routing/model-router.service';
import type { ChatCompletion, Usage } from '../providers/shared/openai-types';
import type { UpstreamResponse } from '../providers/shared/upstream-client';
import { StreamRelay } from '../streaming/stream-relay.service';
import { UsageService } from '../usage/usage.service';
import type { ChatCompletionRequestDto } from './dto/chat-completion-request.dto';

/** Routes a validated chat request to its backend and accounts for what it used. */
@Injectable()
export class ChatService {
  constructor(
    private readonly router: ModelRouter,
    private readonly relay: StreamRelay,
    private readonly usage: UsageService,
  ) {}

  /** Non-streaming: returns the OpenAI chat.completion object. */
  async complete(dto: ChatCompletionRequestDto, req: Request, signal: AbortSignal): Promise<ChatCompletion> {
    const route = this.route(dto, req);
    const upstream = await this.send(route, dto, false, signal);
    let completion: ChatCompletion;
    try {
      const body: unknown = await upstream.body.json();
      completion = route.backend.adapter.parseResponse(body);
    } catch (error) {
      if (error instanceof GatewayException) throw error;
      throw route.backend.client.transportError(error);
    }
    completion.model = dto.model;
    this.account(req, route, completion.usage, 'ok');
    return completion;
  }

  /** Streaming: relays SSE to `res`; errors before the first byte are thrown as normal HTTP errors. */
  async stream(dto: ChatCompletionRequestDto, req: Request, res: Response, signal: AbortSignal): Promise<void> {
    const route = this.route(dto, req);
    const upstream = await this.send(route, dto, true, signal);
    const outcome = await this.relay.relay({
      res,
      upstream,
      client: route.backend.client,
      mapper: route.backend.adapter.createStreamMapper(),
      clientModel: dto.model,
      includeUsage: dto.stream_options?.include_usage === true,
      signal,
    });
    if (outcome.error) req.ctx.errorCode = outcome.error.wireCode ?? outcome.error.code;
    req.ctx.aborted = outcome.aborted || undefined;
    this.account(req, route, outcome.usage, outcome.aborted ? 'aborted' : outcome.error ? 'error' : 'ok');
    this.relay.finish(res, outcome);
  }

  private route(dto: ChatCompletionRequestDto, req: Request): Route {
    const route = this.router.resolve(dto.model, req.ctx.principal!);
    req.ctx.model = dto.model;
    req.ctx.backend = route.backend.id;
    req.ctx.upstreamModel = route.config.upstreamModel;
    if (dto.thinking?.type === 'enabled' && route.config.thinking === 'none') {
      throw new GatewayException('invalid_request', `The model \`${dto.model}\` does not support extended reasoning ('thinking').`, {
        param: 'thinking',
        wireCode: null,
      });
    }
    return route;
  }

  private async send(route: Route, dto: ChatCompletionRequestDto, stream: boolean, signal: AbortSignal): Promise<UpstreamResponse> {
    const { adapter, client } = route.backend;
    const call = adapter.buildRequest(dto, { upstreamModel: route.config.upstreamModel, model: route.config }, stream);
    const upstream = await client.send(call, signal);
    if (upstream.status >= 200 && upstream.status < 300) return upstream;
    const text = await upstream.body.text().catch(() => '');
    throw adapter.mapError(upstream.status, text, upstream.headers);
  }

  private account(req: Request, route: Route, usage: Usage | undefined, outcome: 'ok' | 'error' | 'aborted'): void {
    const principal = req.ctx.principal!;
    req.ctx.promptTokens = usage?.prompt_tokens;
    req.ctx.completionTokens = usage?.completion_tokens;
    this.usage.record({
      teamId: principal.teamId,
      tokenId: principal.tokenId,
      model: route.model,
      promptTokens: usage?.prompt_tokens ?? 0,
      completionTokens: usage?.completion_tokens ?? 0,
      outcome,
    });
  }
}
