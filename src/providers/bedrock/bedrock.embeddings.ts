import type { EmbeddingRequest, EmbeddingResponse } from '../../core/embedding-request';
import { constraint } from '../shared/reasoning';

/** Cohere Embed's `input_type` on Bedrock: OpenAI's API has no such field, and stored texts are what most embed. */
const COHERE_INPUT_TYPE = 'search_document';

/** Which embeddings body a Bedrock model takes: Cohere Embed's (`texts`) or Titan Text Embeddings' (`inputText`). */
export function isCohereEmbed(upstreamModel: string): boolean {
  return /(^|[./:])cohere\.embed/.test(upstreamModel);
}

/**
 * OpenAI embeddings -> InvokeModel's body for a Bedrock embedding model. Titan Text Embeddings v2 takes one
 * `inputText` per call (`dimensions` passes through: 256, 512 or 1024), so several inputs are several calls; Cohere
 * Embed takes up to 96 `texts` with an `input_type`. Both embed text only: token arrays are a 400 before any call.
 */
export function embeddingBody(
  request: EmbeddingRequest,
  upstreamModel: string,
): Record<string, unknown> | Array<Record<string, unknown>> {
  const input = request.input;
  if (typeof input !== 'string' && !input.every((item) => typeof item === 'string')) {
    throw constraint(
      'Bedrock embedding models embed text: `input` must be a string or an array of strings, not token arrays.',
      'input',
    );
  }
  const texts = typeof input === 'string' ? [input] : (input as string[]);
  if (isCohereEmbed(upstreamModel)) {
    if (texts.length > 96)
      throw constraint('Cohere Embed on Bedrock takes at most 96 inputs per request.', 'input');
    return { texts, input_type: COHERE_INPUT_TYPE };
  }
  const dimensions = typeof request.dimensions === 'number' ? { dimensions: request.dimensions } : {};
  const bodies = texts.map((inputText) => ({ inputText, ...dimensions }));
  // One text per Titan call: several go as an array the client sends one by one (titan-batch.ts).
  return bodies.length === 1 ? bodies[0] : bodies;
}

/**
 * Titan's `{embedding, inputTextTokenCount}` or Cohere's `{embeddings}` (a list of vectors, or `{float: [...]}`
 * when embedding types were asked for) -> OpenAI's list. Titan counts its input (a batch: the sum); Cohere's count
 * is the gateway's.
 */
export function embeddingsOf(body: unknown): EmbeddingResponse | undefined {
  const answer = body as {
    embedding?: unknown;
    inputTextTokenCount?: unknown;
    embeddings?: unknown;
  } | null;
  if (Array.isArray(answer?.embedding)) {
    const reply: EmbeddingResponse = {
      object: 'list',
      data: [{ object: 'embedding', index: 0, embedding: answer.embedding as number[] }],
      model: '',
    };
    if (typeof answer.inputTextTokenCount === 'number')
      reply.usage = { prompt_tokens: answer.inputTextTokenCount, total_tokens: answer.inputTextTokenCount };
    return reply;
  }
  const embeddings = answer?.embeddings;
  const vectors = Array.isArray(embeddings)
    ? embeddings
    : (embeddings as { float?: unknown } | undefined)?.float;
  if (!Array.isArray(vectors) || !vectors.every((vector) => Array.isArray(vector))) return undefined;
  const reply: EmbeddingResponse = {
    object: 'list',
    data: vectors.map((vector, index) => ({ object: 'embedding', index, embedding: vector as number[] })),
    model: '',
  };
  // A Titan batch (titan-batch.ts) carries its calls' summed count.
  if (typeof answer?.inputTextTokenCount === 'number')
    reply.usage = { prompt_tokens: answer.inputTextTokenCount, total_tokens: answer.inputTextTokenCount };
  return reply;
}
