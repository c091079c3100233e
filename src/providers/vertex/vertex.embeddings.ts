import type { EmbeddingRequest, EmbeddingResponse } from '../../core/embedding-request';
import { constraint } from '../shared/reasoning';

/**
 * How many instances Vertex takes in one `:predict` of a text embedding model. Google's "Get text embeddings" page
 * (https://cloud.google.com/vertex-ai/generative-ai/docs/embeddings/get-text-embeddings, "Supported models" and
 * "API limits"): "gemini-embedding-001 supports one instance per request"; for the others "for each request, you're
 * limited to 250 input texts", and "the API has a maximum input token limit of 20,000" (a 400 beyond it: see
 * TOKENS_PER_CALL). Vertex
 * answers 400 INVALID_ARGUMENT to a request with more ("Unable to submit request because it included too many
 * instances ... batchSize must be 1 but the entered value was 56", quoted in RooCodeInc/Roo-Code#5123).
 */
export function instancesPerCall(model: string): number {
  return model.startsWith('gemini-embedding') ? 1 : 250;
}

/** Vertex's cap on the input tokens of one `:predict` (the same "API limits"). */
export const TOKENS_PER_CALL = 20_000;

/**
 * At least as many tokens as Vertex counts for a text, without its tokenizer: every token covers at least one byte of
 * the UTF-8 text (a SentencePiece vocabulary falls back to single bytes at worst), and a few are added for the text's
 * own markers. English runs about four bytes a token, so a call holds about a quarter of what Vertex would take: more
 * calls than needed, never a 400 for the cap.
 */
function tokensAtMost(instance: unknown): number {
  const content = (instance as { content?: unknown } | null)?.content;
  return (typeof content === 'string' ? Buffer.byteLength(content, 'utf8') : 0) + 2;
}

const PREDICT_PATH = /\/publishers\/google\/models\/([^/:?]+):predict$/;

/**
 * The bodies a `:predict` call goes as when one call could not take all its instances: in order, each body with at
 * most `instancesPerCall` instances and at most TOKENS_PER_CALL tokens by `tokensAtMost` (an instance over that on
 * its own goes alone, for Vertex to truncate or refuse), each with the request's `parameters`. Undefined when it
 * goes as it is.
 */
export function predictParts(path: string, body: string | Buffer): string[] | undefined {
  const model = PREDICT_PATH.exec(path)?.[1];
  if (!model) return undefined;
  const cap = instancesPerCall(decodeURIComponent(model));
  const request = JSON.parse(body.toString()) as { instances?: unknown; parameters?: unknown };
  if (!Array.isArray(request.instances)) return undefined;
  const parts: unknown[][] = [];
  let part: unknown[] = [];
  let tokens = 0;
  for (const instance of request.instances) {
    const more = tokensAtMost(instance);
    if (part.length > 0 && (part.length === cap || tokens + more > TOKENS_PER_CALL)) {
      parts.push(part);
      part = [];
      tokens = 0;
    }
    part.push(instance);
    tokens += more;
  }
  if (parts.length === 0) return undefined;
  parts.push(part);
  return parts.map((instances) => JSON.stringify({ ...request, instances }));
}

/** The parts' answers as one, as if Vertex had embedded every instance in one call: predictions in order. */
export function joinedPredictions(answers: unknown[]): { predictions: unknown[] } {
  return {
    predictions: answers.flatMap((answer) => {
      const predictions = (answer as { predictions?: unknown } | null)?.predictions;
      // A part without its predictions makes the whole answer malformed (parseEmbeddingResponse says so).
      return Array.isArray(predictions) ? predictions : [null];
    }),
  };
}

/**
 * OpenAI embeddings -> Vertex's `publishers/google/models/<m>:predict` for text embedding models: one instance
 * `{content}` per input, `dimensions` as `parameters.outputDimensionality`. Text only: token arrays are a 400
 * before any call. More instances than the model takes in one call are split by the client (`predictParts`).
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
