/**
 * OpenAI's embeddings API as the adapters read and answer it (POST /v1/embeddings): the provider contract's own
 * types; embeddings/dto validates requests into this shape.
 */
export interface EmbeddingRequest {
  [passthrough: string]: unknown;
  model: string;
  /** A string, strings, a token array, or token arrays. */
  input: string | string[] | number[] | number[][];
  encoding_format?: 'float' | 'base64';
  dimensions?: number;
  user?: string;
}

export interface EmbeddingResponse {
  object: 'list';
  data: Array<{ object: 'embedding'; index: number; embedding: number[] | string }>;
  model: string;
  usage?: { prompt_tokens: number; total_tokens: number };
}
