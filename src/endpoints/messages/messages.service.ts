import { Injectable } from '@nestjs/common';
import type { IncomingHttpHeaders, ServerResponse } from 'node:http';
import { GatewayException } from '../../core/errors/gateway.exception';
import { isPacedBody, nextTurn } from '../../common/http/json-shape';
import { ChatService } from '../../gateway/chat.service';
import type { ClientWire } from '../../gateway/client-wire';
import type { ChatRequest } from '../../core/chat-request';
import { sendToBackend } from '../../providers/backend-call';
import { ModelRouter } from '../../routing/model-router.service';
import { TokenCounter } from '../../usage/token-counter';
import type { RequestLedger } from '../../gateway/request-ledger';
import { promptTexts, reservationEstimate } from '../../usage/token-estimator';
import { chatToMessage } from './chat-to-messages';
import type { MessagesPromptDto, MessagesRequestDto } from './dto/messages-request.dto';
import { chatMessages, messagesToChat, toolFields } from './messages-to-chat';
import { MessagesStreamEncoder } from './messages-stream-encoder';
import { NativeMessagesEncoder } from './native-stream-encoder';
import { nativeBody, speaksMessages } from './native-body';
import type { JsonSource } from '../../core/json-splice';

/** What the client sent besides the validated body: what a native call forwards. */
export interface MessagesCall {
  /** The client's own body, when it may be forwarded (an Anthropic backend takes it as it came). */
  source?: JsonSource;
  headers: IncomingHttpHeaders;
}

export interface TokenCount {
  input_tokens: number;
  /** True when the gateway counted (no Anthropic backend to ask). */
  estimated: boolean;
}

/**
 * Anthropic's Messages API on the chat pipeline: the same routing, deployments, fallbacks, admission and
 * accounting as chat completions (ChatService), with Anthropic deployments taking the request natively and
 * every other family getting it translated to chat and its answer translated back.
 */
@Injectable()
export class MessagesService {
  constructor(
    private readonly chat: ChatService,
    private readonly router: ModelRouter,
    private readonly counter: TokenCounter,
  ) {}

  /** Streams to `res`, or returns the Message for a non-streaming request. */
  async create(
    dto: MessagesRequestDto,
    call: MessagesCall,
    ledger: RequestLedger,
    res: ServerResponse,
    signal: AbortSignal,
  ): Promise<Record<string, unknown> | undefined> {
    const request = messagesToChat(dto);
    if (isPacedBody(dto)) await nextTurn(); // a big body's translation on a turn of its own (json-shape.ts)
    const wire = this.wire(dto, request, call);
    if (dto.stream === true) {
      await this.chat.stream(request, wire, ledger, res, signal);
      return undefined;
    }
    const answer = await this.chat.complete(request, wire, ledger, res, signal);
    if (!answer.native) return chatToMessage(answer.completion, dto.model);
    const message = answer.upstreamBody as Record<string, unknown>;
    message.model = dto.model;
    return message;
  }

  /** Exact from an Anthropic backend (its count_tokens); otherwise the gateway's tokenizer estimate. */
  async countTokens(
    dto: MessagesPromptDto,
    call: MessagesCall,
    ledger: RequestLedger,
    signal: AbortSignal,
  ): Promise<TokenCount> {
    const route = this.router.resolve(dto.model, ledger.principal!);
    ledger.routed(dto.model, route.backend.id, route.deployments[0].upstreamModel);
    if (route.config.kind !== 'chat') {
      throw new GatewayException(
        'invalid_request',
        `The model \`${dto.model}\` is an embedding model: it takes no messages.`,
        { param: 'model', wireCode: null },
      );
    }
    const deployment = route.deployments[0];
    if (speaksMessages(deployment)) {
      const body = nativeBody(dto, call.source, deployment.upstreamModel);
      const upstream = await sendToBackend(
        deployment.backend,
        deployment.backend.adapter.nativeCall!({
          api: 'messages.count_tokens',
          body,
          stream: false,
          clientHeaders: call.headers,
        }),
        signal,
      );
      const counted = (await upstream.body.json()) as { input_tokens?: unknown };
      if (typeof counted?.input_tokens === 'number')
        return { input_tokens: counted.input_tokens, estimated: false };
    }
    const tools = toolFields(dto).tools;
    return {
      input_tokens: await this.counter.prompt(promptTexts(chatMessages(dto), tools)),
      estimated: true,
    };
  }

  private wire(dto: MessagesRequestDto, request: ChatRequest, call: MessagesCall): ClientWire {
    return {
      native: {
        api: 'messages',
        accepts: speaksMessages,
        call: (deployment, stream) =>
          deployment.backend.adapter.nativeCall!({
            api: 'messages',
            body: nativeBody(dto, call.source, deployment.upstreamModel),
            stream,
            clientHeaders: call.headers,
          }),
      },
      streamEncoder: (_deployment, native) =>
        native
          ? new NativeMessagesEncoder(dto.model)
          : new MessagesStreamEncoder(
              dto.model,
              reservationEstimate(promptTexts(request.messages, request.tools)),
            ),
      thinkingIsAHint: true,
    };
  }
}
