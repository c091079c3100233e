import { list, object, type Operation } from '../../openapi/operation';

/** This endpoint's routes in the OpenAPI document (openapi/openapi.document.ts). */
export const responsesOperations: Operation[] = [
  {
    method: 'post',
    path: '/v1/responses',
    access: 'team',
    summary:
      "OpenAI's Responses API, streamed (semantic events) or not, for every chat model; `store` (default true) keeps it for the team.",
    body: 'ResponsesRequestDto',
    ok: {
      status: 200,
      description: 'A response object, or response.* events ending in response.completed',
      schema: object({ object: { const: 'response' }, output: { type: 'array' } }),
    },
  },
  {
    method: 'get',
    path: '/v1/responses/{id}',
    access: 'team',
    summary: "A stored response of the caller's team (404 otherwise).",
    ok: { status: 200, description: 'The response', schema: object({ object: { const: 'response' } }) },
  },
  {
    method: 'delete',
    path: '/v1/responses/{id}',
    access: 'team',
    summary: 'Delete a stored response.',
    ok: { status: 200, description: 'Deleted', schema: object({ deleted: { const: true } }) },
  },
  {
    method: 'get',
    path: '/v1/responses/{id}/input_items',
    access: 'team',
    summary: "A stored response's input items, paged (OpenAI's cursor list).",
    query: 'InputItemsQueryDto',
    ok: { status: 200, description: 'Input items', schema: list() },
  },
];
