/**
 * The attribute names the gateway's spans use, from the OpenTelemetry semantic conventions (HTTP and error.type:
 * stable; every `gen_ai.*`: Development). Written out here rather than imported: the GenAI names are only in
 * `@opentelemetry/semantic-conventions/incubating`, a subpath export this build's module resolution does not read,
 * and pinning them in one file makes a rename in the conventions a visible change. test/unit/tracing-attributes.spec.ts
 * holds each name to the package's own constant (semantic-conventions 1.45.0).
 */
export const ATTR = {
  httpRequestMethod: 'http.request.method',
  httpRoute: 'http.route',
  httpResponseStatusCode: 'http.response.status_code',
  urlPath: 'url.path',
  urlScheme: 'url.scheme',
  clientAddress: 'client.address',
  userAgent: 'user_agent.original',
  serverAddress: 'server.address',
  serverPort: 'server.port',
  errorType: 'error.type',
  operationName: 'gen_ai.operation.name',
  providerName: 'gen_ai.provider.name',
  requestModel: 'gen_ai.request.model',
  requestStream: 'gen_ai.request.stream',
  requestMaxTokens: 'gen_ai.request.max_tokens',
  requestTemperature: 'gen_ai.request.temperature',
  requestTopP: 'gen_ai.request.top_p',
  responseModel: 'gen_ai.response.model',
  inputTokens: 'gen_ai.usage.input_tokens',
  outputTokens: 'gen_ai.usage.output_tokens',
  cacheReadInputTokens: 'gen_ai.usage.cache_read.input_tokens',
  cacheCreationInputTokens: 'gen_ai.usage.cache_creation.input_tokens',
  reasoningOutputTokens: 'gen_ai.usage.reasoning.output_tokens',
  inputMessages: 'gen_ai.input.messages',
  outputMessages: 'gen_ai.output.messages',
} as const;

/** The gateway's own attributes (no convention names them yet: semantic-conventions-genai#299 is open). */
export const SWITCHYARD = {
  requestId: 'switchyard.request_id',
  team: 'switchyard.team',
  /** The model the client asked for (server span) or the configured model a call was routed as (client span). */
  model: 'switchyard.model',
  /** `<backend>/<upstream model>`. */
  deployment: 'switchyard.deployment',
  fallback: 'switchyard.fallback',
  /** The usage was counted by the gateway's tokenizer, not reported by the upstream. */
  usageEstimated: 'switchyard.usage.estimated',
} as const;
