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
 * `inputText` per call (`dimensions` passes through: 256, 512 or 1024); Cohere Embed takes up to 96 `texts` with an
 * `input_type`. Both embed text only, so token arrays are a 400 before any call, as is more than one input for
 * Titan.
 */
export function embeddingBody(request: EmbeddingRequest, upstreamModel: string): Record<string, unknown> {
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
  if (texts.length !== 1) {
    throw constraint(
      'Titan Text Embeddings embeds one text per request: send `input` as a single string.',
      'input',
    );
  }
  const body: Record<string, unknown> = { inputText: texts[0] };
  if (typeof request.dimensions === 'number') body.dimensions = request.dimensions;
  return body;
}

/**
 * Titan's `{embedding, inputTextTokenCount}` or Cohere's `{embeddings}` (a list of vectors, or `{float: [...]}`
 * when embedding types were asked for) -> OpenAI's list. Titan counts its input; Cohere's count is the gateway's.
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
  return {
    object: 'list',
    data: vectors.map((vector, index) => ({ object: 'embedding', index, embedding: vector as number[] })),
    model: '',
  };
}
