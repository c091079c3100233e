import { isPacedBody, nextTurn } from '../../common/http/json-shape';
import type { ClientCall, EndpointSpec } from '../../gateway/endpoint-spec';
import type { ClientWire } from '../../gateway/client-wire';
import type { ChatRequest } from '../../core/chat-request';
import { promptTexts, reservationEstimate } from '../../usage/token-estimator';
import { anthropicErrors } from './anthropic-error-body';
import { chatToMessage } from './chat-to-messages';
import type { MessagesPromptDto, MessagesRequestDto } from './dto/messages-request.dto';
import { chatMessages, messagesToChat, toolFields } from './messages-to-chat';
import { MessagesStreamEncoder } from './messages-stream-encoder';
import { NativeMessagesEncoder } from './native-stream-encoder';
import { nativeBody, speaksMessages } from './native-body';

/**
 * POST /v1/messages (Anthropic's Messages API) on the chat pipeline: Anthropic deployments take the client's
 * request natively (its bytes when nothing needs changing), every other family gets it translated to chat and its
 * answer translated back. Claude Code adds `?beta=true`; the query is ignored. Errors in Anthropic's shape.
 */
export const messagesEndpoint: EndpointSpec<MessagesRequestDto> = {
  path: '/v1/messages',
  billedAs: 'messages',
  errors: anthropicErrors,
  keepsClientBytes: true,
  requestIdHeader: 'request-id', // Anthropic's SDKs surface it as the request id
  async open(dto, client) {
    const request = messagesToChat(dto);
    if (isPacedBody(dto)) await nextTurn(); // a big body's translation on a turn of its own (json-shape.ts)
    return {
      kind: 'chat',
      request,
      wire: messagesWire(dto, request, client),
      reply(answer) {
        if (!answer.native) return chatToMessage(answer.completion, dto.model);
        const message = answer.upstreamBody as Record<string, unknown>;
        message.model = dto.model;
        return message;
      },
    };
  },
};

/**
 * POST /v1/messages/count_tokens: exact from an Anthropic backend (its count_tokens), otherwise the gateway's
 * tokenizer estimate (`x-switchyard-token-count` says which). Not billed (Anthropic does not charge for counting):
 * no usage record, but the team's model access applies.
 */
export const countTokensEndpoint: EndpointSpec<MessagesPromptDto> = {
  path: '/v1/messages/count_tokens',
  billedAs: undefined,
  errors: anthropicErrors,
  keepsClientBytes: true,
  requestIdHeader: 'request-id',
  open(dto, client) {
    return {
      kind: 'count',
      model: dto.model,
      prompt: () => promptTexts(chatMessages(dto), toolFields(dto).tools),
      nativeCall: (deployment) =>
        speaksMessages(deployment)
          ? deployment.backend.adapter.nativeCall!({
              api: 'messages.count_tokens',
              body: nativeBody(dto, client.source, deployment.upstreamModel),
              stream: false,
              clientHeaders: client.headers,
            })
          : undefined,
      reply(count) {
        client.response.setHeader('x-switchyard-token-count', count.estimated ? 'estimated' : 'exact');
        return { input_tokens: count.tokens };
      },
    };
  },
};

function messagesWire(dto: MessagesRequestDto, request: ChatRequest, client: ClientCall): ClientWire {
  return {
    native: {
      api: 'messages',
      accepts: speaksMessages,
      call: (deployment, stream) =>
        deployment.backend.adapter.nativeCall!({
          api: 'messages',
          body: nativeBody(dto, client.source, deployment.upstreamModel),
          stream,
          clientHeaders: client.headers,
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
