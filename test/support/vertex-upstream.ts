import { createPublicKey, generateKeyPairSync, verify, type KeyObject } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { AnthropicUpstream } from './anthropic-upstream';
import { GeminiUpstream } from './gemini-upstream';
import { StandInServer, type RecordedRequest } from './standin-server';

const SCOPE = 'https://www.googleapis.com/auth/cloud-platform';
const JWT_BEARER = 'urn:ietf:params:oauth:grant-type:jwt-bearer';
const TOKEN_EXCHANGE = 'urn:ietf:params:oauth:grant-type:token-exchange';
const ACCESS_TOKEN_TYPE = 'urn:ietf:params:oauth:token-type:access_token';
/** The subject token types Google's STS takes (its token reference: OIDC ID tokens, SAML, AWS requests). */
const SUBJECT_TOKEN_TYPES = new Set([
  'urn:ietf:params:oauth:token-type:jwt',
  'urn:ietf:params:oauth:token-type:id_token',
  'urn:ietf:params:oauth:token-type:saml2',
  'urn:ietf:params:aws:token-type:aws4_request',
]);

/**
 * The `anthropic-beta` values this stand-in's Claude accepts, as Vertex's does (its 400 names the others). Written
 * here from what Google and public reports say Vertex takes, not from the gateway's list (which a test checks
 * against this one), each with where it comes from:
 *   - computer-use-2025-01-24, computer-use-2025-11-24: Google's "Claude computer use" page for Vertex, and the
 *     tool versions Anthropic's computer-use page names for them;
 *   - context-1m-2025-08-07: Google's Claude Sonnet 4 / 4.5 model pages (the 1M context window is a beta header);
 *   - context-management-2025-06-27, compact-2026-01-12: sent as the header to rawPredict and accepted
 *     (BerriAI/litellm#22321, curl against Vertex);
 *   - interleaved-thinking-2025-05-14: Anthropic's extended-thinking page (interleaved thinking on Vertex);
 *   - tool-search-tool-2025-10-19: the tool-search beta's Vertex and Bedrock name (advanced-tool-use-2025-11-20 is
 *     Anthropic's API's only);
 *   - web-search-2025-03-05: Google's "Claude web search" page (ax-llm/ax#457).
 * Refused as published: code-execution-2025-05-22 (pydantic/pydantic-ai#2512), structured-outputs-2025-11-13
 * (vercel/ai#10981), claude-code-20250219, effort-2025-11-24 (anthropics/claude-code#12429).
 */
const VERTEX_BETAS = new Set([
  'compact-2026-01-12',
  'computer-use-2025-01-24',
  'computer-use-2025-11-24',
  'context-1m-2025-08-07',
  'context-management-2025-06-27',
  'interleaved-thinking-2025-05-14',
  'tool-search-tool-2025-10-19',
  'web-search-2025-03-05',
]);

/**
 * A stand-in Google Vertex AI, written from Google's docs, that is also the service account's OAuth token endpoint:
 *
 * - `POST /token` (the key file's `token_uri`): the JWT-bearer grant (RFC 7523; Google's "Using OAuth 2.0 for
 *   Server to Server Applications", HTTP/REST): form `grant_type=urn:ietf:params:oauth:grant-type:jwt-bearer` and
 *   `assertion=<JWT>`. The JWT is checked here by its own code (node:crypto, not the library that signed it):
 *   RS256 over header.payload against the public half of the key pair made for the test, `iss` the account,
 *   `aud` this token_uri, `scope` cloud-platform, `iat`/`exp` at most an hour apart and current. Answers
 *   `{access_token, expires_in, token_type}`, or OAuth's 400 `{error, error_description}`.
 * - `POST /v1/token` (an `external_account` file's `token_url`): Google's Security Token Service token exchange
 *   (RFC 8693; STS's `v1/token` reference), for workload identity federation: form `grant_type=urn:ietf:params:oauth:
 *   grant-type:token-exchange`, `requested_token_type=urn:ietf:params:oauth:token-type:access_token`,
 *   `subject_token_type`, `subject_token`, `audience` (the pool provider), `scope`. The subject token must be one
 *   `trustSubjectToken` registered for that audience (the identity provider's token, checked here by equality: the
 *   stand-in is also that provider); answers `{access_token, issued_token_type, token_type, expires_in}`, or
 *   OAuth's 400 `{error, error_description}`. The token it issues is accepted by the model routes like any other.
 * - `POST /v1/projects/<p>/locations/<r>/publishers/<pub>/models/<m>:<method>` with `Authorization: Bearer <token>`
 *   (a token it issued, not expired, else Google's 401 UNAUTHENTICATED body); another project is 403
 *   PERMISSION_DENIED. Publishers:
 *   google     `generateContent`, `streamGenerateContent?alt=sse`: the Gemini stand-in's answers (gemini-upstream.ts:
 *              gemini-echo and friends); `predict` for embeddings (`instances: [{content, task_type?, title?}]`,
 *              `parameters: {outputDimensionality?, autoTruncate?}` -> `predictions[].embeddings.{values,
 *              statistics.{token_count, truncated}}`, `metadata.billableCharacterCount`); unknown members 400.
 *   anthropic  `rawPredict`, `streamRawPredict` (body `stream: true`): the Messages body without `model`, with
 *              `anthropic_version: "vertex-2023-10-16"`; `anthropic-beta` values Vertex does not know are a 400;
 *              answered by the Anthropic stand-in (claude-echo and friends). `count-tokens:rawPredict` counts
 *              (its body names the `model`).
 *   Any model named `*-exhausted`, and any `predict` past `predictQuota`: Vertex's 429 RESOURCE_EXHAUSTED; `*-leak-token`: a 400 whose message quotes the
 *   request's Authorization header (a vendor echoing a credential, for the scrubbing tests).
 */
export class VertexUpstream extends StandInServer {
  readonly project = 'switchyard-test';
  readonly clientEmail = 'gateway@switchyard-test.iam.gserviceaccount.com';
  readonly privateKeyId = 'b3f1c2d4e5a6978812345678deadbeefcafe0001';
  /** Seconds each issued token lives (a test sets it short to see a refresh). */
  tokenLifetime = 3600;
  /** `:predict` calls the project's quota still answers before 429 RESOURCE_EXHAUSTED (undefined: no limit). */
  predictQuota?: number;
  /** Tokens issued, in order, with when each expires (ms). */
  readonly issued: Array<{ token: string; expiresAt: number }> = [];
  /** Answers the token endpoint refused, with why. */
  readonly refusedGrants: string[] = [];
  /** The token exchanges STS granted: the audience and the subject token each came with. */
  readonly exchanges: Array<{ audience: string; subjectToken: string; token: string }> = [];
  /** Subject tokens STS trusts, by the workload identity pool provider (audience) they are for. */
  private readonly trusted = new Map<string, Set<string>>();
  private readonly privateKeyPem: string;
  private readonly publicKey: KeyObject;
  private readonly claude = new AnthropicUpstream(this.seed);
  private readonly gemini = new GeminiUpstream(this.seed);

  constructor(seed = 34) {
    super(seed);
    const pair = generateKeyPairSync('rsa', { modulusLength: 2048 });
    this.privateKeyPem = pair.privateKey.export({ type: 'pkcs8', format: 'pem' }).toString();
    this.publicKey = createPublicKey(pair.publicKey.export({ type: 'spki', format: 'pem' }));
  }

  get url(): string {
    return this.origin;
  }

  get tokenUri(): string {
    return `${this.origin}/token`;
  }

  /** A service-account key file as the Cloud console downloads it, its token_uri this server; returns its path. */
  writeKeyFile(dir: string, privateKeyPem = this.privateKeyPem): string {
    const path = join(dir, 'service-account.json');
    writeFileSync(
      path,
      JSON.stringify({
        type: 'service_account',
        project_id: this.project,
        private_key_id: this.privateKeyId,
        private_key: privateKeyPem,
        client_email: this.clientEmail,
        client_id: '109876543210987654321',
        auth_uri: 'https://accounts.google.com/o/oauth2/auth',
        token_uri: this.tokenUri,
        auth_provider_x509_cert_url: 'https://www.googleapis.com/oauth2/v1/certs',
        client_x509_cert_url: `https://www.googleapis.com/robot/v1/metadata/x509/${encodeURIComponent(this.clientEmail)}`,
        universe_domain: 'googleapis.com',
      }),
    );
    return path;
  }

  /** STS's token endpoint, an `external_account` file's `token_url`. */
  get stsTokenUrl(): string {
    return `${this.origin}/v1/token`;
  }

  /** Makes STS take `subjectToken` for `audience` (as a pool provider trusts its identity provider's tokens). */
  trustSubjectToken(audience: string, subjectToken: string): void {
    const tokens = this.trusted.get(audience) ?? new Set<string>();
    tokens.add(subjectToken);
    this.trusted.set(audience, tokens);
  }

  /**
   * An `external_account` credentials file as `gcloud iam workload-identity-pools create-cred-config` writes it for
   * a file-sourced subject token (no service-account impersonation), its token_url this server; returns its path.
   */
  writeExternalAccountFile(dir: string, audience: string, subjectTokenFile: string): string {
    const path = join(dir, 'external-account.json');
    writeFileSync(
      path,
      JSON.stringify({
        universe_domain: 'googleapis.com',
        type: 'external_account',
        audience,
        subject_token_type: 'urn:ietf:params:oauth:token-type:jwt',
        token_url: this.stsTokenUrl,
        credential_source: { file: subjectTokenFile, format: { type: 'text' } },
      }),
    );
    return path;
  }

  /** Calls that reached a model (not the token endpoint), optionally of one model. */
  modelCalls(model?: string): RecordedRequest[] {
    return this.requests.filter((r) => {
      const route = modelRoute(r.path);
      return route !== undefined && (model === undefined || route.model === model);
    });
  }

  protected override modelOf(recorded: RecordedRequest): string {
    return modelRoute(recorded.path)?.model ?? '';
  }

  protected async handle(
    recorded: RecordedRequest,
    req: IncomingMessage,
    res: ServerResponse,
  ): Promise<void> {
    if (recorded.path === '/token') return this.token(recorded, res);
    if (recorded.path === '/v1/token') return this.exchange(recorded, res);
    const route = modelRoute(recorded.path);
    if (!route)
      return googleError(res, 404, 'NOT_FOUND', `The requested URL ${recorded.path} was not found.`);
    if (!this.authorised(recorded.headers.authorization))
      return googleError(
        res,
        401,
        'UNAUTHENTICATED',
        'Request had invalid authentication credentials. Expected OAuth 2 access token, login cookie or other valid authentication credential. See https://developers.google.com/identity/sign-in/web/devconsole-project.',
      );
    if (route.project !== this.project)
      return googleError(
        res,
        403,
        'PERMISSION_DENIED',
        `Permission 'aiplatform.endpoints.predict' denied on resource '//aiplatform.googleapis.com/projects/${route.project}/locations/${route.location}/publishers/${route.publisher}/models/${route.model}' (or it may not exist).`,
      );
    if (route.model.endsWith('-exhausted'))
      return googleError(
        res,
        429,
        'RESOURCE_EXHAUSTED',
        'Resource exhausted. Please try again later. Please refer to https://cloud.google.com/vertex-ai/generative-ai/docs/error-code-429 for more details.',
      );
    if (route.model.endsWith('-leak-token'))
      return googleError(
        res,
        400,
        'INVALID_ARGUMENT',
        `Request with ${String(recorded.headers.authorization)} cannot use this model.`,
      );
    if (route.publisher === 'google') return this.google(route, recorded, req, res);
    if (route.publisher === 'anthropic') return this.anthropic(route, recorded, req, res);
    return googleError(
      res,
      404,
      'NOT_FOUND',
      `Publisher Model \`${route.publisher}/${route.model}\` not found.`,
    );
  }

  /** An OAuth error answer (RFC 6749 5.2), remembered for the tests. */
  private oauthRefusal(res: ServerResponse): (error: string, description: string) => void {
    return (error, description) => {
      this.refusedGrants.push(`${error}: ${description}`);
      res.writeHead(400, { 'content-type': 'application/json; charset=utf-8' });
      res.end(JSON.stringify({ error, error_description: description }));
    };
  }

  /** The JWT-bearer grant, checked by this server's own code. */
  private token({ text, headers }: RecordedRequest, res: ServerResponse): void {
    const refuse = this.oauthRefusal(res);
    const form = formOf(text, headers);
    if (!form) return refuse('invalid_request', 'Bad Request');
    if (form.get('grant_type') !== JWT_BEARER)
      return refuse('unsupported_grant_type', `Invalid grant_type: ${form.get('grant_type') ?? ''}`);
    const parts = (form.get('assertion') ?? '').split('.');
    if (parts.length !== 3) return refuse('invalid_grant', 'Invalid JWT: Malformed');
    let header: Record<string, unknown>;
    let claims: Record<string, unknown>;
    try {
      header = JSON.parse(Buffer.from(parts[0], 'base64url').toString('utf8'));
      claims = JSON.parse(Buffer.from(parts[1], 'base64url').toString('utf8'));
    } catch {
      return refuse('invalid_grant', 'Invalid JWT: Malformed');
    }
    const signed = verify(
      'RSA-SHA256',
      Buffer.from(`${parts[0]}.${parts[1]}`),
      this.publicKey,
      Buffer.from(parts[2], 'base64url'),
    );
    if (header.alg !== 'RS256' || !signed) return refuse('invalid_grant', 'Invalid JWT Signature.');
    if (claims.iss !== this.clientEmail) return refuse('invalid_grant', 'Invalid JWT: Invalid issuer.');
    if (claims.aud !== this.tokenUri) return refuse('invalid_grant', 'Invalid JWT: Failed audience check.');
    if (typeof claims.scope !== 'string' || !claims.scope.split(' ').includes(SCOPE))
      return refuse('invalid_scope', 'Invalid OAuth scope or ID token audience provided.');
    const now = Math.floor(Date.now() / 1000);
    const { iat, exp } = claims as { iat?: unknown; exp?: unknown };
    if (
      typeof iat !== 'number' ||
      typeof exp !== 'number' ||
      exp - iat > 3600 ||
      exp <= now ||
      iat > now + 60
    )
      return refuse(
        'invalid_grant',
        'Invalid JWT: Token must be a short-lived token (60 minutes) and in a reasonable timeframe. Check your iat and exp values in the JWT claim.',
      );
    const token = this.id('ya29.c.', 40);
    this.issued.push({ token, expiresAt: Date.now() + this.tokenLifetime * 1000 });
    res.writeHead(200, { 'content-type': 'application/json; charset=utf-8' });
    res.end(JSON.stringify({ access_token: token, expires_in: this.tokenLifetime, token_type: 'Bearer' }));
  }

  /** STS's token exchange, checked by this server's own code. */
  private exchange({ text, headers }: RecordedRequest, res: ServerResponse): void {
    const refuse = this.oauthRefusal(res);
    const form = formOf(text, headers);
    if (!form) return refuse('invalid_request', 'Bad Request');
    if (form.get('grant_type') !== TOKEN_EXCHANGE)
      return refuse('invalid_request', `Invalid value for "grant_type": ${form.get('grant_type') ?? ''}`);
    if (form.get('requested_token_type') !== ACCESS_TOKEN_TYPE)
      return refuse('invalid_request', 'Invalid value for "requested_token_type".');
    if (!SUBJECT_TOKEN_TYPES.has(form.get('subject_token_type') ?? ''))
      return refuse('invalid_request', 'Invalid value for "subject_token_type".');
    const audience = form.get('audience') ?? '';
    const trusted = this.trusted.get(audience);
    if (!trusted)
      return refuse(
        'invalid_target',
        'The target service indicated by the "audience" parameters is invalid.',
      );
    const subjectToken = form.get('subject_token') ?? '';
    if (!trusted.has(subjectToken))
      return refuse('invalid_grant', 'The provided subject token is not valid for this pool provider.');
    if (!(form.get('scope') ?? '').split(' ').includes(SCOPE))
      return refuse('invalid_scope', 'Invalid OAuth scope.');
    const token = this.id('ya29.d.', 40);
    this.issued.push({ token, expiresAt: Date.now() + this.tokenLifetime * 1000 });
    this.exchanges.push({ audience, subjectToken, token });
    res.writeHead(200, { 'content-type': 'application/json; charset=utf-8' });
    res.end(
      JSON.stringify({
        access_token: token,
        issued_token_type: ACCESS_TOKEN_TYPE,
        token_type: 'Bearer',
        expires_in: this.tokenLifetime,
      }),
    );
  }

  private authorised(header: string | undefined): boolean {
    const token = /^Bearer (\S+)$/.exec(header ?? '')?.[1];
    const issued = this.issued.find((t) => t.token === token);
    return issued !== undefined && issued.expiresAt > Date.now();
  }

  private google(route: ModelRoute, recorded: RecordedRequest, req: IncomingMessage, res: ServerResponse) {
    if (route.method === 'predict' && this.predictQuota !== undefined && this.predictQuota-- <= 0)
      return googleError(
        res,
        429,
        'RESOURCE_EXHAUSTED',
        `Quota exceeded for aiplatform.googleapis.com/online_prediction_requests_per_base_model with base model: ${route.model}. Please submit a quota increase request. https://cloud.google.com/vertex-ai/docs/generative-ai/quotas-genai.`,
      );
    if (route.method === 'predict') return this.predict(route.model, recorded.body, res);
    if (route.method !== 'generateContent' && route.method !== 'streamGenerateContent')
      return googleError(res, 400, 'INVALID_ARGUMENT', `Method ${route.method} is not supported.`);
    // The same GenerateContent wire as the Gemini API: its stand-in answers, under its own path and key.
    return this.gemini.answerFor(
      recorded,
      {
        ...recorded,
        path: `/v1beta/models/${route.model}:${route.method}${route.query}`,
        headers: { ...recorded.headers, 'x-goog-api-key': 'upstream-secret-key' },
      },
      req,
      res,
    );
  }

  private predict(model: string, body: Record<string, any>, res: ServerResponse): void {
    const extra = Object.keys(body).find((k) => k !== 'instances' && k !== 'parameters');
    if (extra)
      return googleError(
        res,
        400,
        'INVALID_ARGUMENT',
        `Invalid JSON payload received. Unknown name "${extra}": Cannot find field.`,
      );
    if (!Array.isArray(body.instances) || body.instances.length === 0)
      return googleError(res, 400, 'INVALID_ARGUMENT', 'instances must be a non-empty list.');
    const cap = model.startsWith('gemini-embedding') ? 1 : 250;
    if (body.instances.length > cap)
      return googleError(
        res,
        400,
        'INVALID_ARGUMENT',
        `Unable to submit request because it included too many instances. Reduce the number of instances and try again. Learn more: https://cloud.google.com/vertex-ai/generative-ai/docs/model-reference/text-embeddings: Unable to submit request because batchSize must be ${cap === 1 ? '1' : `at most ${cap}`} but the entered value was ${body.instances.length}. Update the batchSize value and try again.`,
      );
    for (const instance of body.instances) {
      const unknown = Object.keys(instance ?? {}).find((k) => !['content', 'task_type', 'title'].includes(k));
      if (unknown || typeof instance?.content !== 'string')
        return googleError(
          res,
          400,
          'INVALID_ARGUMENT',
          `Invalid instance: ${unknown ?? 'content'} is not valid.`,
        );
    }
    const tokens = body.instances.reduce((n: number, i: { content: string }) => n + wordsOf(i.content), 0);
    if (tokens > 20_000)
      return googleError(
        res,
        400,
        'INVALID_ARGUMENT',
        `The input token count (${tokens}) exceeds the maximum number of tokens allowed (20000).`,
      );
    const size = body.parameters?.outputDimensionality ?? 8;
    const predictions = body.instances.map(({ content }: { content: string }) => ({
      embeddings: {
        statistics: { truncated: false, token_count: wordsOf(content) },
        values: vertexVector(content, size),
      },
    }));
    const billableCharacterCount = body.instances.reduce(
      (n: number, i: { content: string }) => n + i.content.replace(/\s/g, '').length,
      0,
    );
    res.writeHead(200, { 'content-type': 'application/json; charset=UTF-8' });
    res.end(JSON.stringify({ predictions, metadata: { billableCharacterCount } }));
  }

  private anthropic(route: ModelRoute, recorded: RecordedRequest, req: IncomingMessage, res: ServerResponse) {
    const { body, headers } = recorded;
    const betas = String(headers['anthropic-beta'] ?? '')
      .split(',')
      .map((b) => b.trim())
      .filter(Boolean);
    const unexpected = betas.filter((b) => !VERTEX_BETAS.has(b));
    if (unexpected.length)
      return anthropicError(
        res,
        400,
        `Unexpected value(s) ${unexpected.map((b) => `\`${b}\``).join(', ')} for the \`anthropic-beta\` header. Please consult our documentation at docs.anthropic.com or try again without the header.`,
      );
    if (body.anthropic_version !== 'vertex-2023-10-16')
      return anthropicError(res, 400, "anthropic_version: Input should be 'vertex-2023-10-16'");
    const messages: Record<string, any> = { ...body };
    delete messages.anthropic_version;
    const counting = route.model === 'count-tokens';
    if (
      counting
        ? route.method !== 'rawPredict'
        : route.method !== 'rawPredict' && route.method !== 'streamRawPredict'
    )
      return googleError(res, 400, 'INVALID_ARGUMENT', `Method ${route.method} is not supported.`);
    if (!counting && 'model' in messages)
      return anthropicError(res, 400, 'model: Extra inputs are not permitted');
    if (route.method === 'streamRawPredict' && messages.stream !== true)
      return anthropicError(res, 400, 'stream: streamRawPredict requires "stream": true');
    if (route.method === 'rawPredict' && messages.stream === true)
      return anthropicError(res, 400, 'stream: use streamRawPredict to stream');
    // The Messages API behind it: Anthropic's stand-in answers, under its own path, key and version header.
    const forwarded = counting ? messages : { model: route.model, ...messages };
    return this.claude.answerFor(
      recorded,
      {
        ...recorded,
        path: counting ? '/v1/messages/count_tokens' : '/v1/messages',
        headers: { ...headers, 'x-api-key': 'upstream-secret-key', 'anthropic-version': '2023-06-01' },
        body: forwarded,
        text: JSON.stringify(forwarded),
      },
      req,
      res,
    );
  }
}

/** The stand-in's token count of a text: its words. */
function wordsOf(content: string): number {
  return content.split(/\s+/).filter(Boolean).length;
}

/** The vector this stand-in answers for a text (a hash of it), for tests to check which input a vector is of. */
export function vertexVector(content: string, size = 8): number[] {
  return Array.from({ length: size }, (_, i) => {
    let hash = 2166136261 ^ i;
    for (let c = 0; c < content.length; c++) hash = Math.imul(hash ^ content.charCodeAt(c), 16777619);
    return ((hash >>> 0) / 4294967295) * 2 - 1;
  });
}

interface ModelRoute {
  project: string;
  location: string;
  publisher: string;
  model: string;
  method: string;
  query: string;
}

function modelRoute(path: string): ModelRoute | undefined {
  const match =
    /^\/v1\/projects\/([^/]+)\/locations\/([^/]+)\/publishers\/([^/]+)\/models\/([^/:]+):([A-Za-z]+)(\?.*)?$/.exec(
      path,
    );
  if (!match) return undefined;
  const [, project, location, publisher, model, method, query] = match;
  return { project, location, publisher, model: decodeURIComponent(model), method, query: query ?? '' };
}

/** Google's error body (google.rpc.Status as JSON). */
function googleError(res: ServerResponse, code: number, status: string, message: string): void {
  res.writeHead(code, { 'content-type': 'application/json; charset=UTF-8' });
  res.end(JSON.stringify({ error: { code, message, status } }));
}

/** What Claude on Vertex answers for a request it refuses (Anthropic's body, Vertex's request id). */
function anthropicError(res: ServerResponse, status: number, message: string): void {
  res.writeHead(status, { 'content-type': 'application/json' });
  res.end(
    JSON.stringify({
      type: 'error',
      error: { type: 'invalid_request_error', message },
      request_id: 'req_vrtx_011CStandIn',
    }),
  );
}

/** A form-encoded body's fields, or undefined when the request is not form-encoded. */
function formOf(text: string, headers: RecordedRequest['headers']): URLSearchParams | undefined {
  return String(headers['content-type']).startsWith('application/x-www-form-urlencoded')
    ? new URLSearchParams(text)
    : undefined;
}
