import { execFileSync } from 'node:child_process';
import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createServer as createHttpsServer, type Server as HttpsServer } from 'node:https';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import * as tls from 'node:tls';
import { answerResponses } from './openai-responses';
import { generate, StandInServer, type RecordedRequest } from './standin-server';

/**
 * A stand-in Azure OpenAI resource, written from Azure's documented wire (learn.microsoft.com: "Azure OpenAI v1 API",
 * "REST API reference" for the dated versions, "Content filtering" and "Content streaming"), and the Entra ID
 * authority that issues its tokens.
 *
 * Routes: `POST /openai/v1/{chat/completions,embeddings,responses}` (the deployment is the body's `model`; no
 * api-version, or `v1`/`preview`) and `POST /openai/deployments/<deployment>/{chat/completions,embeddings}
 * ?api-version=<dated>` (one of `versions`; none: 404 Resource not found; another: 400 API version not supported).
 * A deployment that does not exist is a 404 DeploymentNotFound. Chat requests with a parameter Azure does not know
 * are refused as Azure refuses them ("Unrecognized request argument supplied").
 *
 * Auth, checked by its own code: `api-key` must be `apiKey`; or `Authorization: Bearer <token>` where the token is
 * one this stand-in's authority signed (HS256 with its own key), for audience https://cognitiveservices.azure.com,
 * this tenant and app, and not expired. Anything else: Azure's 401.
 *
 * The authority (`authorityHost`, https with a certificate made at start by openssl: @azure/identity refuses a
 * plain-http authority) serves `/<tenant>/v2.0/.well-known/openid-configuration` and the client-credentials grant at
 * `/<tenant>/oauth2/v2.0/token`, checking client id, secret and scope, refusing with Entra's AADSTS errors.
 *
 * Answers (chat, by deployment): as Azure's default content filter writes them, with `prompt_filter_results` and
 * `content_filter_results` on the answer and each choice, and streams that open with the prompt's annotation event
 * (`choices: []`, empty id/model/object):
 *   echo             "echo: <last user text>", one word per chunk
 *   echo-async       like echo, with the asynchronous filter's annotation-only events (no delta) between chunks
 *   filtered-prompt  400 content_filter (innererror ResponsibleAIPolicyViolation), the prompt refused
 *   filtered-answer  "echo:" then finish_reason content_filter (the completion filtered)
 *   throttled        429 with Retry-After and retry-after-ms, as Azure's token-rate limit answers
 *   leaky            400 whose message quotes the credential it got (the gateway must scrub it)
 *   embed            embeddings (one vector of 8 per input)
 * Responses (v1 only) are OpenAI's (openai-responses.ts), by deployment name (echo, tool-caller).
 */
export const AZURE_API_KEY = 'azure-resource-key-0123456789abcdef';
export const ENTRA = {
  tenantId: 'tenant-9f1c',
  clientId: 'app-4d2e',
  clientSecret: 'entra-client-secret-xyz789',
};
const AUDIENCE = 'https://cognitiveservices.azure.com';
const SCOPE = `${AUDIENCE}/.default`;
const DEPLOYMENTS = new Set([
  'echo',
  'echo-async',
  'filtered-prompt',
  'filtered-answer',
  'throttled',
  'leaky',
  'embed',
  'tool-caller',
]);
/** Chat completion parameters Azure accepts (anything else: 400 Unrecognized request argument). */
const CHAT_PARAMS = new Set([
  'messages',
  'model',
  'audio',
  'data_sources',
  'frequency_penalty',
  'function_call',
  'functions',
  'logit_bias',
  'logprobs',
  'max_completion_tokens',
  'max_tokens',
  'metadata',
  'modalities',
  'n',
  'parallel_tool_calls',
  'prediction',
  'presence_penalty',
  'prompt_cache_key',
  'reasoning_effort',
  'response_format',
  'safety_identifier',
  'seed',
  'stop',
  'store',
  'stream',
  'stream_options',
  'temperature',
  'tool_choice',
  'tools',
  'top_logprobs',
  'top_p',
  'user',
  'user_security_context',
  'verbosity',
]);
const SAFE = {
  hate: { filtered: false, severity: 'safe' },
  self_harm: { filtered: false, severity: 'safe' },
  sexual: { filtered: false, severity: 'safe' },
  violence: { filtered: false, severity: 'safe' },
};
const FILTERED = { ...SAFE, violence: { filtered: true, severity: 'high' } };

export interface IssuedToken {
  token: string;
  expiresAt: number;
}

export class AzureUpstream extends StandInServer {
  /** Dated api-versions this resource serves. */
  readonly versions = new Set(['2024-10-21', '2025-04-01-preview']);
  /** What the authority's tokens last (Entra's are about an hour). */
  tokenLifetimeSeconds = 3599;
  /** Every token the authority issued, in order. */
  readonly issued: IssuedToken[] = [];
  /** Every call with a credential this resource refused (none expected of the gateway). */
  readonly refused: RecordedRequest[] = [];
  /** Token requests the authority refused. */
  readonly refusedSignIns: string[] = [];
  private readonly signingKey = randomBytes(32);
  private authority?: HttpsServer;
  private certDir?: string;
  /** The authority's certificate (PEM): a client must trust it. */
  certificate = '';

  /** The certificate's file (for NODE_EXTRA_CA_CERTS), while the stand-in runs. */
  get certificateFile(): string {
    return join(this.certDir!, 'cert.pem');
  }

  get authorityHost(): string {
    const { port } = this.authority!.address() as AddressInfo;
    return `https://localhost:${port}`;
  }

  /** The resource endpoint as the portal shows it. */
  get url(): string {
    return this.origin;
  }

  override async start(): Promise<this> {
    await super.start();
    this.certDir = mkdtempSync(join(tmpdir(), 'azure-authority-'));
    execFileSync(
      'openssl',
      [
        'req',
        '-x509',
        '-newkey',
        'ec',
        '-pkeyopt',
        'ec_paramgen_curve:prime256v1',
        '-nodes',
        '-keyout',
        'key.pem',
        '-out',
        'cert.pem',
        '-days',
        '1',
        '-subj',
        '/CN=localhost',
        '-addext',
        'subjectAltName=DNS:localhost,IP:127.0.0.1',
      ],
      { cwd: this.certDir, stdio: 'ignore' },
    );
    this.certificate = readFileSync(join(this.certDir, 'cert.pem'), 'utf8');
    this.authority = createHttpsServer(
      { key: readFileSync(join(this.certDir, 'key.pem')), cert: this.certificate },
      (req, res) => void this.signIn(req, res),
    );
    await new Promise<void>((resolve) => this.authority!.listen(0, '127.0.0.1', resolve));
    return this;
  }

  /**
   * Makes this process's TLS clients trust the authority's certificate (Node's tls.setDefaultCACertificates, the
   * in-process form of NODE_EXTRA_CA_CERTS, for a gateway started inside the test's process).
   */
  trustInThisProcess(): void {
    tls.setDefaultCACertificates([...tls.getCACertificates('default'), this.certificate]);
  }

  override async stop(): Promise<void> {
    this.authority?.closeAllConnections();
    await new Promise<void>((resolve) =>
      this.authority ? this.authority.close(() => resolve()) : resolve(),
    );
    if (this.certDir) rmSync(this.certDir, { recursive: true, force: true });
    await super.stop();
  }

  /** The deployment a recorded call was for (in the body on v1, in the path on a dated version). */
  protected override modelOf(recorded: RecordedRequest): string {
    const dated = /^\/openai\/deployments\/([^/]+)\//.exec(recorded.path);
    return dated ? decodeURIComponent(dated[1]) : String(recorded.body.model ?? '');
  }

  // ---- the Entra ID authority -------------------------------------------------------------------------------

  private async signIn(req: IncomingMessage, res: ServerResponse): Promise<void> {
    let text = '';
    for await (const chunk of req) text += String(chunk);
    const url = new URL(req.url ?? '/', this.authorityHost);
    const json = (status: number, body: unknown): void => {
      res.writeHead(status, { 'content-type': 'application/json; charset=utf-8' }).end(JSON.stringify(body));
    };
    const tenant = url.pathname.split('/')[1];
    const aadError = (status: number, error: string, description: string) => {
      this.refusedSignIns.push(error);
      json(status, {
        error,
        error_description: `${description}\r\nTrace ID: ${this.id('', 8)}\r\nTimestamp: ${new Date().toISOString()}`,
        error_codes: [Number(/AADSTS(\d+)/.exec(description)?.[1] ?? 0)],
        timestamp: new Date().toISOString(),
      });
    };
    if (tenant !== ENTRA.tenantId)
      return aadError(
        400,
        'invalid_tenant',
        `AADSTS90002: Tenant '${tenant}' not found. Check to make sure you have the correct tenant ID.`,
      );
    const base = `${this.authorityHost}/${tenant}`;
    if (req.method === 'GET' && url.pathname === `/${tenant}/v2.0/.well-known/openid-configuration`) {
      return json(200, {
        token_endpoint: `${base}/oauth2/v2.0/token`,
        authorization_endpoint: `${base}/oauth2/v2.0/authorize`,
        end_session_endpoint: `${base}/oauth2/v2.0/logout`,
        jwks_uri: `${base}/discovery/v2.0/keys`,
        issuer: `${base}/v2.0`,
        token_endpoint_auth_methods_supported: [
          'client_secret_post',
          'private_key_jwt',
          'client_secret_basic',
        ],
        response_types_supported: ['code', 'id_token', 'code id_token', 'id_token token'],
        tenant_region_scope: 'EU',
      });
    }
    if (req.method !== 'POST' || url.pathname !== `/${tenant}/oauth2/v2.0/token`)
      return json(404, { error: 'not_found' });
    const form = new URLSearchParams(text);
    if (form.get('grant_type') !== 'client_credentials')
      return aadError(
        400,
        'unsupported_grant_type',
        'AADSTS70003: The app requested an unsupported grant type.',
      );
    if (form.get('client_id') !== ENTRA.clientId)
      return aadError(
        400,
        'unauthorized_client',
        `AADSTS700016: Application with identifier '${form.get('client_id')}' was not found in the directory.`,
      );
    const secret = Buffer.from(form.get('client_secret') ?? '');
    const expected = Buffer.from(ENTRA.clientSecret);
    if (secret.length !== expected.length || !timingSafeEqual(secret, expected))
      return aadError(
        401,
        'invalid_client',
        `AADSTS7000215: Invalid client secret provided. Ensure the secret being sent in the request is the client secret value, not the client secret ID, for a secret added to app '${ENTRA.clientId}'.`,
      );
    if (form.get('scope') !== SCOPE)
      return aadError(
        400,
        'invalid_scope',
        `AADSTS1002012: The provided value for scope ${form.get('scope')} is not valid. Client credential flows must have a scope value with /.default suffixed to the resource identifier.`,
      );
    const now = Math.floor(Date.now() / 1000);
    const token = this.sign({
      aud: AUDIENCE,
      iss: `https://sts.windows.net/${tenant}/`,
      tid: tenant,
      appid: ENTRA.clientId,
      iat: now,
      nbf: now,
      exp: now + this.tokenLifetimeSeconds,
    });
    this.issued.push({ token, expiresAt: (now + this.tokenLifetimeSeconds) * 1000 });
    json(200, {
      token_type: 'Bearer',
      expires_in: this.tokenLifetimeSeconds,
      ext_expires_in: this.tokenLifetimeSeconds,
      access_token: token,
    });
  }

  private sign(claims: Record<string, unknown>): string {
    const part = (value: unknown) => Buffer.from(JSON.stringify(value)).toString('base64url');
    const head = `${part({ typ: 'JWT', alg: 'HS256' })}.${part(claims)}`;
    return `${head}.${createHmac('sha256', this.signingKey).update(head).digest('base64url')}`;
  }

  /** Whether a bearer token is one of ours, for this resource, app and tenant, and still valid. */
  private tokenIsValid(token: string): boolean {
    const [head, body, signature] = token.split('.');
    if (!head || !body || !signature) return false;
    const expected = createHmac('sha256', this.signingKey).update(`${head}.${body}`).digest();
    const given = Buffer.from(signature, 'base64url');
    if (given.length !== expected.length || !timingSafeEqual(given, expected)) return false;
    let claims: Record<string, unknown>;
    try {
      claims = JSON.parse(Buffer.from(body, 'base64url').toString('utf8')) as Record<string, unknown>;
    } catch {
      return false;
    }
    return (
      claims.aud === AUDIENCE &&
      claims.tid === ENTRA.tenantId &&
      claims.appid === ENTRA.clientId &&
      typeof claims.exp === 'number' &&
      claims.exp * 1000 > Date.now()
    );
  }

  // ---- the resource -----------------------------------------------------------------------------------------

  protected handle(recorded: RecordedRequest, req: IncomingMessage, res: ServerResponse): void {
    const url = new URL(req.url ?? '/', this.origin);
    const version = url.searchParams.get('api-version');
    const v1 = /^\/openai\/v1\/(chat\/completions|embeddings|responses)$/.exec(url.pathname);
    const dated = /^\/openai\/deployments\/([^/]+)\/(chat\/completions|embeddings)$/.exec(url.pathname);
    if (req.method !== 'POST' || (!v1 && !dated))
      return this.azureError(res, 404, '404', 'Resource not found');
    if (!this.authorized(req)) {
      this.refused.push(recorded);
      return this.azureError(
        res,
        401,
        '401',
        req.headers['api-key'] !== undefined
          ? 'Access denied due to invalid subscription key or wrong API endpoint. Make sure to provide a valid key for an active subscription and use a correct regional API endpoint for your resource.'
          : 'Unauthorized. Access token is missing, invalid, audience is incorrect (https://cognitiveservices.azure.com), or have expired.',
      );
    }
    let operation: string;
    let deployment: string;
    if (v1) {
      if (version !== null && version !== 'v1' && version !== 'preview')
        return this.azureError(res, 400, 'BadRequest', 'API version not supported');
      operation = v1[1];
      deployment = String(recorded.body.model ?? '');
      if (!deployment) return this.openaiError(res, 400, "Missing required parameter: 'model'.", 'model');
    } else {
      if (version === null) return this.azureError(res, 404, '404', 'Resource not found');
      if (!this.versions.has(version))
        return this.azureError(res, 400, 'BadRequest', 'API version not supported');
      operation = dated![2];
      deployment = decodeURIComponent(dated![1]);
    }
    if (!DEPLOYMENTS.has(deployment))
      return this.azureError(
        res,
        404,
        'DeploymentNotFound',
        'The API deployment for this resource does not exist. If you created the deployment within the last 5 minutes, please wait a moment and try again.',
      );
    if (deployment === 'throttled') {
      res.setHeader('retry-after', '2');
      res.setHeader('retry-after-ms', '1500');
      return this.azureError(
        res,
        429,
        '429',
        `Requests to the ChatCompletions_Create Operation under Azure OpenAI API version ${version ?? 'v1'} have exceeded token rate limit of your current OpenAI S0 pricing tier. Please retry after 2 seconds.`,
      );
    }
    if (deployment === 'leaky')
      return this.openaiError(
        res,
        400,
        `Request with credential ${String(req.headers['api-key'] ?? req.headers.authorization)} is malformed`,
        null,
      );
    if (operation === 'embeddings') return this.embeddings(recorded.body, res);
    if (operation === 'responses') return answerResponses(recorded, res, (prefix) => this.id(prefix));
    return this.chat(recorded.body, deployment, res);
  }

  private authorized(req: IncomingMessage): boolean {
    const key = req.headers['api-key'];
    if (key !== undefined) {
      const given = Buffer.from(String(key));
      const expected = Buffer.from(AZURE_API_KEY);
      return given.length === expected.length && timingSafeEqual(given, expected);
    }
    const bearer = /^Bearer (\S+)$/.exec(req.headers.authorization ?? '');
    return bearer !== null && this.tokenIsValid(bearer[1]);
  }

  private chat(body: Record<string, any>, deployment: string, res: ServerResponse): void {
    const unknown = Object.keys(body).find((key) => !CHAT_PARAMS.has(key));
    if (unknown)
      return this.openaiError(res, 400, `Unrecognized request argument supplied: ${unknown}`, null);
    if (!Array.isArray(body.messages) || !body.messages.length)
      return this.openaiError(res, 400, "'messages' is a required property", 'messages');
    if (deployment === 'filtered-prompt')
      return res.writeHead(400, { 'content-type': 'application/json' }).end(
        JSON.stringify({
          error: {
            message:
              "The response was filtered due to the prompt triggering Azure OpenAI's content management policy. Please modify your prompt and retry. To learn more about our content filtering policies please read our documentation: https://go.microsoft.com/fwlink/?linkid=2198766",
            type: null,
            param: 'prompt',
            code: 'content_filter',
            status: 400,
            innererror: { code: 'ResponsibleAIPolicyViolation', content_filter_result: FILTERED },
          },
        }),
      ) as unknown as void;
    const messages = body.messages as Array<{ role: string; content: unknown }>;
    const lastUser = [...messages].reverse().find((m) => m.role === 'user');
    const userText =
      typeof lastUser?.content === 'string'
        ? lastUser.content
        : ((lastUser?.content as Array<{ text?: string }> | undefined) ?? [])
            .map((p) => p.text ?? '')
            .join(' ');
    const made = generate(deployment === 'filtered-answer' ? 'echo: ' : `echo: ${userText}`, {
      maxTokens: (body.max_completion_tokens ?? body.max_tokens) as number | undefined,
      stops: typeof body.stop === 'string' ? [body.stop] : ((body.stop as string[] | undefined) ?? []),
    });
    const finishReason =
      deployment === 'filtered-answer' ? 'content_filter' : made.ended === 'max_tokens' ? 'length' : 'stop';
    const promptTokens = messages.reduce(
      (n, m) =>
        n +
        String(typeof m.content === 'string' ? m.content : '')
          .split(/\s+/)
          .filter(Boolean).length,
      0,
    );
    const usage = {
      completion_tokens: made.tokens.length,
      completion_tokens_details: {
        accepted_prediction_tokens: 0,
        reasoning_tokens: 0,
        rejected_prediction_tokens: 0,
      },
      prompt_tokens: promptTokens,
      prompt_tokens_details: { cached_tokens: 0 },
      total_tokens: promptTokens + made.tokens.length,
    };
    const id = this.id('chatcmpl-', 29);
    const created = Math.floor(Date.now() / 1000);
    const model = 'gpt-4o-2024-11-20';
    const promptFilterResults = [{ prompt_index: 0, content_filter_results: SAFE }];
    const answerResults = finishReason === 'content_filter' ? FILTERED : SAFE;
    if (!body.stream) {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(
        JSON.stringify({
          choices: [
            {
              content_filter_results: answerResults,
              finish_reason: finishReason,
              index: 0,
              logprobs: null,
              message: { annotations: [], content: made.text, refusal: null, role: 'assistant' },
            },
          ],
          created,
          id,
          model,
          object: 'chat.completion',
          prompt_filter_results: promptFilterResults,
          system_fingerprint: 'fp_azure1',
          usage,
        }),
      );
      return;
    }
    const includeUsage = body.stream_options?.include_usage === true;
    const event = (data: unknown) => res.write(`data: ${JSON.stringify(data)}\n\n`);
    const chunk = (choice: Record<string, unknown>) =>
      event({
        choices: [choice],
        created,
        id,
        model,
        object: 'chat.completion.chunk',
        system_fingerprint: 'fp_azure1',
        ...(includeUsage ? { usage: null } : {}),
      });
    res.writeHead(200, { 'content-type': 'text/event-stream; charset=utf-8', 'cache-control': 'no-cache' });
    event({
      choices: [],
      created: 0,
      id: '',
      model: '',
      object: '',
      prompt_filter_results: promptFilterResults,
    });
    chunk({
      content_filter_results: {},
      delta: { content: '', refusal: null, role: 'assistant' },
      finish_reason: null,
      index: 0,
      logprobs: null,
    });
    for (const [i, token] of made.tokens.entries()) {
      chunk({
        content_filter_results: SAFE,
        delta: { content: token },
        finish_reason: null,
        index: 0,
        logprobs: null,
      });
      if (deployment === 'echo-async')
        event({
          choices: [
            {
              content_filter_offsets: { check_offset: i, start_offset: i, end_offset: i + 1 },
              content_filter_results: SAFE,
              finish_reason: null,
              index: 0,
            },
          ],
          created: 0,
          id: '',
          model: '',
          object: '',
        });
    }
    chunk({
      content_filter_results: finishReason === 'content_filter' ? FILTERED : {},
      delta: {},
      finish_reason: finishReason,
      index: 0,
      logprobs: null,
    });
    if (includeUsage)
      event({
        choices: [],
        created,
        id,
        model,
        object: 'chat.completion.chunk',
        system_fingerprint: 'fp_azure1',
        usage,
      });
    res.end('data: [DONE]\n\n');
  }

  private embeddings(body: Record<string, any>, res: ServerResponse): void {
    const inputs: unknown[] = typeof body.input === 'string' ? [body.input] : body.input;
    if (!Array.isArray(inputs) || !inputs.length)
      return this.openaiError(res, 400, "'input' is a required property", 'input');
    let tokens = 0;
    const data = inputs.map((input, index) => {
      const text = typeof input === 'string' ? input : JSON.stringify(input);
      tokens += text.split(/\s+/).filter(Boolean).length;
      const vector = Array.from(
        { length: 8 },
        (_, i) => ((text.charCodeAt(i % text.length) * (i + 1)) % 200) / 100 - 1,
      );
      const embedding =
        body.encoding_format === 'base64'
          ? Buffer.from(new Float32Array(vector).buffer).toString('base64')
          : vector;
      return { object: 'embedding', index, embedding };
    });
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(
      JSON.stringify({
        object: 'list',
        data,
        model: 'text-embedding-3-small',
        usage: { prompt_tokens: tokens, total_tokens: tokens },
      }),
    );
  }

  /** Azure's own errors (from its API management layer): `{error: {code, message}}`. */
  private azureError(res: ServerResponse, status: number, code: string, message: string): void {
    res
      .writeHead(status, { 'content-type': 'application/json' })
      .end(JSON.stringify({ error: { code, message } }));
  }

  /** Errors from the model service behind it: OpenAI's shape. */
  private openaiError(res: ServerResponse, status: number, message: string, param: string | null): void {
    res
      .writeHead(status, { 'content-type': 'application/json' })
      .end(JSON.stringify({ error: { message, type: 'invalid_request_error', param, code: null } }));
  }
}
