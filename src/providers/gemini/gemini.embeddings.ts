import type { EmbeddingRequest, EmbeddingResponse } from '../../core/embedding-request';
import { constraint } from '../shared/reasoning';

/**
 * OpenAI embeddings -> Gemini's `models/{model}:batchEmbedContents` (one request per input; `dimensions` is
 * `outputDimensionality`). Gemini embeds text only, so token-array inputs are a 400 before any call.
 */
export function toGeminiEmbeddingBody(
  request: EmbeddingRequest,
  upstreamModel: string,
): Record<string, unknown> {
  const input = request.input;
  if (typeof input !== 'string' && !input.every((item) => typeof item === 'string')) {
    throw constraint(
      'Gemini embeds text: `input` must be a string or an array of strings, not token arrays.',
      'input',
    );
  }
  const texts = typeof input === 'string' ? [input] : (input as string[]);
  const dimensions =
    typeof request.dimensions === 'number' ? { outputDimensionality: request.dimensions } : {};
  return {
    requests: texts.map((text) => ({
      model: `models/${upstreamModel}`,
      content: { parts: [{ text }] },
      ...dimensions,
    })),
  };
}

/** `{embeddings: [{values}]}` -> OpenAI's list (floats; the embeddings endpoint encodes base64 when asked). No usage: the gateway counts. */
export function fromGeminiEmbeddings(body: unknown): EmbeddingResponse | undefined {
  const embeddings = (body as { embeddings?: Array<{ values?: unknown }> } | null)?.embeddings;
  if (!Array.isArray(embeddings) || !embeddings.every((e) => Array.isArray(e?.values))) return undefined;
  return {
    object: 'list',
    data: embeddings.map((e, index) => ({ object: 'embedding', index, embedding: e.values as number[] })),
    model: '',
  };
}
