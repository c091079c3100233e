import { object, type Operation } from '../../openapi/operation';

/** This endpoint's routes in the OpenAPI document (openapi/openapi.document.ts). */
export const chatCompletionsOperations: Operation[] = [
  {
    method: 'post',
    path: '/v1/chat/completions',
    access: 'team',
    summary:
      'OpenAI chat completions, streamed (text/event-stream) or not. Fields the gateway does not declare pass through to OpenAI-compatible backends.',
    body: 'ChatCompletionRequestDto',
    ok: {
      status: 200,
      description: 'A chat.completion object, or chat.completion.chunk events ending in data: [DONE]',
      schema: object({ object: { enum: ['chat.completion'] }, choices: { type: 'array' } }),
    },
  },
];
