import type { EmbeddingResponse } from '../../core/embedding-request';
import { openAiErrors } from '../../core/errors/error-shape';
import type { EndpointSpec } from '../../gateway/endpoint-spec';
import type { PromptTexts } from '../../usage/token-estimator';
import type { EmbeddingRequestDto } from './dto/embedding-request.dto';

/**
 * POST /v1/embeddings (OpenAI's shape) on the pipeline: only `kind: embedding` models, deployments whose family
 * serves embeddings; it reserves and is billed for its inputs' tokens (the backend's prompt_tokens, or the gateway's
 * count when it reports none), and answers with the model name the client asked for.
 */
export const embeddingsEndpoint: EndpointSpec<EmbeddingRequestDto> = {
  path: '/v1/embeddings',
  billedAs: 'embeddings',
  errors: openAiErrors,
  keepsClientBytes: false,
  open(request) {
    return {
      kind: 'embedding',
      request,
      prompt: inputTexts(request.input),
      exactTokens: tokenArrays(request.input),
      reply(reply) {
        if (request.encoding_format === 'base64') encodeBase64(reply);
        return reply;
      },
    };
  },
};

/** The inputs as texts to count (token arrays are counted by their length instead). */
function inputTexts(input: EmbeddingRequestDto['input']): PromptTexts {
  const texts =
    typeof input === 'string'
      ? [input]
      : input.every((item) => typeof item === 'string')
        ? (input as string[])
        : [];
  return { fixed: 0, texts };
}

/** Inputs given as tokens already: their count is exact. */
function tokenArrays(input: EmbeddingRequestDto['input']): number | undefined {
  if (typeof input === 'string' || input.length === 0 || typeof input[0] === 'string') return undefined;
  return Array.isArray(input[0])
    ? (input as number[][]).reduce((sum, tokens) => sum + tokens.length, 0)
    : input.length;
}

/**
 * OpenAI's `encoding_format: base64` (what its SDK asks for by default): each vector's little-endian float32
 * bytes. Families that answer floats (Gemini, local) are encoded here; OpenAI-compatible backends already did.
 */
function encodeBase64(reply: EmbeddingResponse): void {
  for (const item of reply.data) {
    if (Array.isArray(item.embedding))
      item.embedding = Buffer.from(new Float32Array(item.embedding).buffer).toString('base64');
  }
}
