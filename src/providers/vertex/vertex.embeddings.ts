import type { EmbeddingRequest, EmbeddingResponse } from '../../core/embedding-request';
import { constraint } from '../shared/reasoning';

/**
 * OpenAI embeddings -> Vertex's `publishers/google/models/<m>:predict` for text embedding models: one instance
 * `{content}` per input, `dimensions` as `parameters.outputDimensionality`. Text only: token arrays are a 400
 * before any call. (Vertex caps the instances per call by model, gemini-embedding-001 at one: its 400 passes on.)
 */
export function toVertexEmbeddingBody(request: EmbeddingRequest): Record<string, unknown> {
  const input = request.input;
  if (typeof input !== 'string' && !input.every((item) => typeof item === 'string')) {
    throw constraint(
      'Vertex embeds text: `input` must be a string or an array of strings, not token arrays.',
      'input',
    );
  }
  const texts = typeof input === 'string' ? [input] : (input as string[]);
  return {
    instances: texts.map((content) => ({ content })),
    ...(typeof request.dimensions === 'number'
      ? { parameters: { outputDimensionality: request.dimensions } }
      : {}),
  };
}

interface Prediction {
  embeddings?: { values?: unknown; statistics?: { token_count?: unknown } };
}

/**
 * `{predictions: [{embeddings: {values, statistics: {token_count}}}]}` -> OpenAI's list, with usage: the inputs'
 * token counts as Vertex counted them.
 */
export function fromVertexEmbeddings(body: unknown): EmbeddingResponse | undefined {
  const predictions = (body as { predictions?: Prediction[] } | null)?.predictions;
  if (!Array.isArray(predictions) || !predictions.every((p) => Array.isArray(p?.embeddings?.values)))
    return undefined;
  const counts = predictions.map((p) => p.embeddings?.statistics?.token_count);
  const tokens = counts.every((count) => typeof count === 'number')
    ? (counts as number[]).reduce((sum, count) => sum + count, 0)
    : undefined;
  return {
    object: 'list',
    data: predictions.map((p, index) => ({
      object: 'embedding',
      index,
      embedding: p.embeddings!.values as number[],
    })),
    model: '',
    ...(tokens === undefined ? {} : { usage: { prompt_tokens: tokens, total_tokens: tokens } }),
  };
}
