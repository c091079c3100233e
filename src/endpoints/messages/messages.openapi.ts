import { object, type Operation } from '../../openapi/operation';

/** This endpoint's routes in the OpenAPI document (openapi/openapi.document.ts). */
export const messagesOperations: Operation[] = [
  {
    method: 'post',
    path: '/v1/messages',
    access: 'team',
    speaks: 'anthropic',
    summary:
      "Anthropic's Messages API, streamed or not: natively to Anthropic backends, translated for every other family. Claude Code's `?beta=true` is ignored.",
    body: 'MessagesRequestDto',
    ok: {
      status: 200,
      description: 'A Message, or Anthropic stream events ending in message_stop',
      schema: object({ type: { const: 'message' }, content: { type: 'array' } }),
    },
  },
  {
    method: 'post',
    path: '/v1/messages/count_tokens',
    access: 'team',
    speaks: 'anthropic',
    summary:
      "A prompt's input tokens: exact from an Anthropic backend, otherwise the gateway's estimate (header x-switchyard-token-count says which).",
    body: 'MessagesPromptDto',
    ok: {
      status: 200,
      description: 'The count',
      schema: object({ input_tokens: { type: 'integer' } }, ['input_tokens']),
    },
  },
];
