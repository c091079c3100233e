import { object, type Operation } from '../../openapi/operation';

/** This endpoint's routes in the OpenAPI document (openapi/openapi.document.ts). */
export const embeddingsOperations: Operation[] = [
  {
    method: 'post',
    path: '/v1/embeddings',
    access: 'team',
    summary:
      'OpenAI embeddings, for models of `kind: embedding`. Fields the gateway does not declare pass through.',
    body: 'EmbeddingRequestDto',
    ok: {
      status: 200,
      description: 'An embeddings list',
      schema: object({ object: { const: 'list' }, data: { type: 'array' } }),
    },
  },
];
