/**
 * Where a Vertex AI model is called: `/v1/projects/<project>/locations/<region>/publishers/<publisher>/models/<model>:<method>`
 * on the region's host. Which publisher serves a model is read from its upstream id (see `publisherOf`).
 */

/** The publishers this family calls: Google's own models (Gemini, text embeddings) and Anthropic's Claude. */
export type VertexPublisher = 'google' | 'anthropic';

/** The region's endpoint: `global` has no region in its host name (a regional host answers 404 for it). */
export function vertexBaseUrl(region: unknown): string | undefined {
  if (typeof region !== 'string' || !/^[a-z][a-z0-9-]*$/.test(region)) return undefined;
  return region === 'global'
    ? 'https://aiplatform.googleapis.com'
    : `https://${region}-aiplatform.googleapis.com`;
}

/**
 * The publisher and model id of an upstream model: `anthropic/<id>` or `google/<id>` name the publisher; otherwise
 * an id starting with `claude-` is Anthropic's (Vertex's Claude ids all do: `claude-sonnet-4-5@20250929`) and any
 * other Google's.
 */
export function publisherOf(upstreamModel: string): { publisher: VertexPublisher; model: string } {
  const slash = upstreamModel.indexOf('/');
  if (slash > 0) {
    const named = upstreamModel.slice(0, slash);
    if (named === 'anthropic' || named === 'google')
      return { publisher: named, model: upstreamModel.slice(slash + 1) };
  }
  return { publisher: upstreamModel.startsWith('claude-') ? 'anthropic' : 'google', model: upstreamModel };
}

/** Why an upstream model id cannot be called on Vertex (another publisher, an empty id), or undefined. */
export function upstreamModelProblem(upstreamModel: string): string | undefined {
  const slash = upstreamModel.indexOf('/');
  if (slash >= 0 && !/^(anthropic|google)\/[^/]+$/.test(upstreamModel))
    return `"${upstreamModel}" is not a Vertex model id ("<id>", "google/<id>" or "anthropic/<id>")`;
  if (!publisherOf(upstreamModel).model) return `"${upstreamModel}" names no model`;
  return undefined;
}

/** The path (below the backend's base URL) of a model's method, e.g. `generateContent` or `streamRawPredict`. */
export function vertexModelPath(
  config: { project: string; region: string },
  publisher: VertexPublisher,
  model: string,
  method: string,
): string {
  return (
    `/v1/projects/${encodeURIComponent(config.project)}/locations/${encodeURIComponent(config.region)}` +
    // `@` (Vertex's version separator, claude-sonnet-4-5@20250929) stays as it is, as Google's own clients send it.
    `/publishers/${publisher}/models/${encodeURIComponent(model).replace(/%40/g, '@')}:${method}`
  );
}

/**
 * The `anthropic-beta` values Vertex's Claude endpoint accepts (it answers 400 "Unexpected value(s) ... for the
 * `anthropic-beta` header" to the whole request for any other; Claude Code sends several first-party-only ones,
 * such as claude-code-20250219). Operators can replace the list per backend (`anthropicBetas`).
 */
export const VERTEX_ANTHROPIC_BETAS: readonly string[] = [
  'interleaved-thinking-2025-05-14',
  'context-1m-2025-08-07',
  'context-management-2025-06-27',
  'computer-use-2025-01-24',
  'computer-use-2025-11-24',
  'tool-search-tool-2025-10-19',
  'web-search-2025-03-05',
  'compact-2026-01-12',
];
