import '../admin/admin.dto';
import '../admin/team-members.dto';
import '../admin/personal-tokens.dto';
import '../usage/usage.dto';
import '../request-log/request-log.dto';
import '../console/console.dto';
import type { DeclaredRoute } from '../access/declared-routes';
import { memberSwitchOf, PERMISSIONS } from '../access/permissions';
import { ERROR_CODES } from '../core/errors/error-codes';
import { dtoSchemas, type SchemaObject } from './dto-schemas';
import { ENDPOINTS } from '../endpoints/endpoints';
import { list, object, ref, type Access, type Operation } from './operation';

/**
 * Every route of the HTTP API, in one table (the endpoints' own come from their folders, through endpoints.ts). test/e2e/openapi.e2e.spec.ts fails if a route the app serves is
 * missing here (or the other way round), and request schemas come from the DTOs themselves (dto-schemas.ts).
 */
export const OPERATIONS: Operation[] = [
  ...ENDPOINTS.flatMap((endpoint) => endpoint.operations),
  {
    method: 'get',
    path: '/v1/models',
    access: 'team',
    summary: 'The models this token may use and that can answer.',
    ok: { status: 200, description: 'OpenAI model list', schema: list() },
  },
  {
    method: 'get',
    path: '/v1/models/{model}',
    access: 'team',
    summary:
      'One model this token may use and that can answer (404 model_not_found otherwise, whether or not it exists). An id with a slash is URL-encoded.',
    ok: {
      status: 200,
      description: 'OpenAI model object',
      schema: object(
        {
          id: { type: 'string' },
          object: { const: 'model' },
          created: { type: 'integer' },
          owned_by: { type: 'string' },
        },
        ['id', 'object', 'created', 'owned_by'],
      ),
    },
  },
  ...mcpOperations(
    '/mcp',
    'every MCP server the team of the token may reach, its permitted tools named `<server>__<tool>`',
  ),
  ...mcpOperations('/mcp/{server}', 'one MCP server the team of the token may reach, under its own names'),
  protectedResourceMetadata('/.well-known/oauth-protected-resource', '/mcp'),
  protectedResourceMetadata('/.well-known/oauth-protected-resource/mcp', '/mcp'),
  protectedResourceMetadata('/.well-known/oauth-protected-resource/mcp/{server}', '/mcp/{server}'),
  {
    method: 'get',
    path: '/v1/usage',
    access: 'team',
    summary: "The caller's own team's usage.",
    query: 'UsageQueryDto',
    ok: { status: 200, description: 'Usage summary', schema: object({ object: { const: 'usage' } }) },
  },
  {
    method: 'get',
    path: '/v1/requests',
    access: 'team',
    summary:
      "The caller's own team's request log, newest first, filtered and paged (`next` is the `after` of the next page).",
    query: 'RequestLogQueryDto',
    ok: { status: 200, description: 'Request log entries', schema: list() },
  },
  {
    method: 'get',
    path: '/v1/requests/{id}',
    access: 'team',
    summary:
      "One request of the caller's own team, with what was sent and answered when the team keeps content.",
    ok: { status: 200, description: 'The entry', schema: object({ object: { const: 'request' } }) },
  },
  {
    method: 'get',
    path: '/metrics',
    access: 'metrics',
    summary: 'Prometheus text format.',
    ok: { status: 200, description: 'Metrics', schema: { type: 'string' }, contentType: 'text/plain' },
  },
  {
    method: 'get',
    path: '/health/live',
    access: 'public',
    summary: 'Liveness: the process answers.',
    ok: { status: 200, description: 'Alive', schema: object({ status: { const: 'ok' } }) },
  },
  {
    method: 'get',
    path: '/health/ready',
    access: 'public',
    summary:
      'Readiness: config loaded, Redis answers, not draining (503 otherwise); names the backends that are unusable and why (still 200, status degraded).',
    ok: { status: 200, description: 'Ready', schema: object({ status: { type: 'string' } }) },
  },
  {
    method: 'post',
    path: '/console/api/session',
    access: 'public',
    summary:
      'Console sign-in: the admin key for an HttpOnly SameSite=Strict session cookie that the admin API accepts in its place (changes also need X-CSRF-Token).',
    body: 'ConsoleSignInDto',
    ok: { status: 201, description: 'The session', schema: ref('ConsoleSession') },
  },
  {
    method: 'get',
    path: '/console/api/session',
    access: 'public',
    summary: 'The console session of the cookie sent (401 without one).',
    ok: { status: 200, description: 'The session', schema: ref('ConsoleSession') },
  },
  {
    method: 'delete',
    path: '/console/api/session',
    access: 'public',
    summary: 'Console sign-out (with X-CSRF-Token).',
    ok: { status: 200, description: 'Signed out', schema: object({ signed_out: { const: true } }) },
  },
  {
    method: 'get',
    path: '/console/api/session/options',
    access: 'public',
    summary:
      'How one may sign in to the console: the admin key (unless console.adminKeySignIn is false), SSO (auth.oidc).',
    ok: {
      status: 200,
      description: 'The sign-in options',
      schema: object({ admin_key: { type: 'boolean' }, sso: { type: 'boolean' } }, ['admin_key', 'sso']),
    },
  },
  {
    method: 'get',
    path: '/console/api/sso/start',
    access: 'public',
    summary:
      'Console sign-in through the identity provider (auth.oidc): a redirect to the provider (authorization code with PKCE, state and nonce); `return` is a path under /console/ to land on. 404 without auth.oidc.',
    ok: { status: 302, description: "Redirect to the provider's authorization endpoint" },
  },
  {
    method: 'get',
    path: '/console/api/sso/callback',
    access: 'public',
    summary:
      "The provider's answer: the code exchanged and the ID token checked; a console session cookie and a redirect to the console, or 401 sso_failed / 403 permission_denied (no role) without a session.",
    ok: { status: 302, description: 'Redirect to the console, signed in' },
  },
  {
    method: 'get',
    path: '/console/api/sso/cli',
    access: 'public',
    summary:
      "Where `switchyard login` signs in: the provider's issuer, the CLI's public client (auth.oidc.cli.clientId) and the scopes to ask. 404 not_found without auth.oidc.cli.",
    ok: {
      status: 200,
      description: 'The CLI sign-in',
      schema: object(
        {
          object: { const: 'sso.cli' },
          issuer: { type: 'string' },
          clientId: { type: 'string' },
          scopes: { type: 'array', items: { type: 'string' } },
        },
        ['issuer', 'clientId', 'scopes'],
      ),
    },
  },
  {
    method: 'post',
    path: '/console/api/sso/cli-token',
    access: 'public',
    summary:
      "`switchyard login`: an ID token of the CLI's public client, fresh from the provider (signature, issuer, audience, expiry, iat within 5 minutes; used once), for a personal admin token of its person with the roles their groups give. 401 sso_failed (counted with wrong admin keys), 403 permission_denied (no role), 404 without auth.oidc.cli.",
    body: 'CliTokenRequestDto',
    ok: {
      status: 201,
      description: 'The personal admin token, with its secret, its person and roles',
      schema: ref('AdminToken'),
    },
  },
  {
    method: 'get',
    path: '/openapi.json',
    access: 'public',
    summary: 'This document.',
    ok: { status: 200, description: 'OpenAPI 3.1', schema: object({ openapi: { type: 'string' } }) },
  },
  {
    method: 'post',
    path: '/admin/v1/teams',
    access: 'admin',
    summary: 'Create a team.',
    body: 'CreateTeamDto',
    ok: { status: 201, description: 'The team', schema: ref('Team') },
  },
  {
    method: 'get',
    path: '/admin/v1/teams',
    access: 'admin',
    summary: 'List teams: all of them, or with `limit` a page by id (`after`, `search`; `has_more`).',
    query: 'TeamListQueryDto',
    ok: { status: 200, description: 'Teams', schema: list(ref('Team')) },
  },
  {
    method: 'get',
    path: '/admin/v1/teams/{team}',
    access: 'admin',
    summary: 'One team.',
    ok: { status: 200, description: 'The team', schema: ref('Team') },
  },
  {
    method: 'get',
    path: '/admin/v1/teams/{team}/budget',
    access: 'admin',
    summary:
      "The team's spend budgets: limit, spent, remaining and the fraction used in the current window (billing currency).",
    ok: {
      status: 200,
      description: 'Budget use',
      schema: object({
        object: { const: 'budget' },
        currency: { type: 'string' },
        budgets: { type: 'array' },
      }),
    },
  },
  {
    method: 'patch',
    path: '/admin/v1/teams/{team}',
    access: 'admin',
    summary:
      "Change a team's models, limits, ceiling, metadata, disabled flag or selfServiceTokens: only what the body names (limits, metadata and the ceiling's limits are merged key by key, JSON Merge Patch; null removes a key). A team-admin may set models and limits only within the team's ceiling (403 permission_denied naming the field); values beyond the ceiling an org-admin names are 400, values not named are lowered into a lowered ceiling.",
    body: 'UpdateTeamDto',
    ok: { status: 200, description: 'The team', schema: ref('Team') },
  },
  {
    method: 'delete',
    path: '/admin/v1/teams/{team}',
    access: 'admin',
    summary: 'Delete a team (409 while it has active tokens, unless force=true).',
    query: 'DeleteTeamQueryDto',
    ok: { status: 200, description: 'Deleted', schema: object({ deleted: { const: true } }) },
  },
  {
    method: 'post',
    path: '/admin/v1/teams/{team}/disable',
    access: 'admin',
    summary: 'Refuse every token of the team at once.',
    ok: { status: 200, description: 'The team', schema: ref('Team') },
  },
  {
    method: 'post',
    path: '/admin/v1/teams/{team}/enable',
    access: 'admin',
    summary: 'Let the team back in.',
    ok: { status: 200, description: 'The team', schema: ref('Team') },
  },
  {
    method: 'post',
    path: '/admin/v1/teams/{team}/tokens',
    access: 'admin',
    summary: 'Issue a token (its secret is in this response only).',
    body: 'CreateTokenDto',
    ok: { status: 201, description: 'The token, with its secret', schema: ref('Token') },
  },
  {
    method: 'get',
    path: '/admin/v1/teams/{team}/tokens',
    access: 'admin',
    summary: "List a team's tokens (no secrets).",
    ok: { status: 200, description: 'Tokens', schema: list(ref('Token')) },
  },
  {
    method: 'get',
    path: '/admin/v1/teams/{team}/members',
    access: 'admin',
    summary: "The team's granted memberships (roles from the identity provider's groups are not listed).",
    ok: { status: 200, description: 'Members', schema: list(ref('TeamMember')) },
  },
  {
    method: 'get',
    path: '/admin/v1/teams/{team}/members/{subject}',
    access: 'admin',
    summary: "One person's granted membership of the team (404 member_not_found without one).",
    ok: { status: 200, description: 'The membership', schema: ref('TeamMember') },
  },
  {
    method: 'put',
    path: '/admin/v1/teams/{team}/members/{subject}',
    access: 'admin',
    summary:
      "Grant (or change) a person's role in the team, by their identity provider's subject: team-admin or team-member. It applies from the person's next request.",
    body: 'PutMemberDto',
    ok: { status: 200, description: 'The membership', schema: ref('TeamMember') },
  },
  {
    method: 'delete',
    path: '/admin/v1/teams/{team}/members/{subject}',
    access: 'admin',
    summary: "Take a granted membership away (from the person's next request).",
    ok: { status: 200, description: 'Deleted', schema: object({ deleted: { const: true } }) },
  },
  {
    method: 'get',
    path: '/admin/v1/me',
    access: 'admin',
    summary:
      'Who the caller is: by which credential (via), the person (null for the admin key) and their roles.',
    ok: { status: 200, description: 'The caller', schema: ref('AdminActor') },
  },
  {
    method: 'post',
    path: '/admin/v1/me/tokens',
    access: 'admin',
    summary:
      'Issue a personal admin token (sy_admin_...) for the calling person, acting with their roles; its secret is in this response only. 403 permission_denied for the admin key (no person).',
    body: 'CreatePersonalTokenDto',
    ok: { status: 201, description: 'The token, with its secret', schema: ref('AdminToken') },
  },
  {
    method: 'get',
    path: '/admin/v1/me/tokens',
    access: 'admin',
    summary: "The calling person's personal admin tokens (no secrets).",
    ok: { status: 200, description: 'Tokens', schema: list(ref('AdminToken')) },
  },
  {
    method: 'delete',
    path: '/admin/v1/me/tokens/{id}',
    access: 'admin',
    summary: "Revoke one of the calling person's personal admin tokens (401 from then on).",
    ok: { status: 200, description: 'The token', schema: ref('AdminToken') },
  },
  {
    method: 'post',
    path: '/admin/v1/me/teams/{team}/tokens',
    access: 'admin',
    summary:
      "Issue a team token of the calling person's own (owner: them); its secret is in this response only. A team-member may where the team has selfServiceTokens on.",
    body: 'CreateTokenDto',
    ok: { status: 201, description: 'The token, with its secret', schema: ref('Token') },
  },
  {
    method: 'get',
    path: '/admin/v1/me/teams/{team}/tokens',
    access: 'admin',
    summary: "The calling person's own tokens of the team (no secrets).",
    ok: { status: 200, description: 'Tokens', schema: list(ref('Token')) },
  },
  {
    method: 'delete',
    path: '/admin/v1/me/teams/{team}/tokens/{id}',
    access: 'admin',
    summary:
      "Revoke one of the calling person's own tokens of the team (404 token_not_found for anyone else's).",
    ok: { status: 200, description: 'The token', schema: ref('Token') },
  },
  {
    method: 'post',
    path: '/admin/v1/me/teams/{team}/tokens/{id}/rotate',
    access: 'admin',
    summary:
      "A new secret for one of the calling person's own tokens of the team (the old one works for the grace period).",
    body: 'RotateTokenDto',
    ok: { status: 200, description: 'The token, with its new secret', schema: ref('Token') },
  },
  {
    method: 'get',
    path: '/admin/v1/people/{subject}/tokens',
    access: 'admin',
    summary: "A person's personal admin tokens, by their identity provider's subject (no secrets).",
    ok: { status: 200, description: 'Tokens', schema: list(ref('AdminToken')) },
  },
  {
    method: 'delete',
    path: '/admin/v1/people/{subject}/tokens/{id}',
    access: 'admin',
    summary: "Revoke a person's personal admin token.",
    ok: { status: 200, description: 'The token', schema: ref('AdminToken') },
  },
  {
    method: 'get',
    path: '/admin/v1/tokens/{id}',
    access: 'admin',
    summary: 'One token (no secret).',
    ok: { status: 200, description: 'The token', schema: ref('Token') },
  },
  {
    method: 'delete',
    path: '/admin/v1/tokens/{id}',
    access: 'admin',
    summary: 'Revoke a token.',
    ok: { status: 200, description: 'The token', schema: ref('Token') },
  },
  {
    method: 'post',
    path: '/admin/v1/tokens/{id}/rotate',
    access: 'admin',
    summary: 'A new secret for the same token id (the old one works for the grace period).',
    body: 'RotateTokenDto',
    ok: { status: 200, description: 'The token, with its new secret', schema: ref('Token') },
  },
  {
    method: 'get',
    path: '/admin/v1/deployments',
    access: 'admin',
    summary:
      "Every model's deployments and their health on the replica that answers (circuit state, failures in a row, last error; why a deployment is down and why its model is not listed).",
    ok: { status: 200, description: 'Deployments', schema: list() },
  },
  {
    method: 'get',
    path: '/admin/v1/mcp/servers',
    access: 'admin',
    summary:
      'Every configured MCP server (docs/mcp.md) with its health and tools on the replica that answers, each asked for its tools now (within its timeoutMs) unless it is in its back-off after failing (then shown as it was left); never its credentials.',
    ok: { status: 200, description: 'MCP servers', schema: list() },
  },
  {
    method: 'get',
    path: '/admin/v1/prices/{model}',
    access: 'admin',
    summary:
      "What a configured model costs on each of its deployments (per million tokens, billing currency) and where each figure came from: the deployment's or model's configured price, the price data (@pydantic/genai-prices or billing.priceData: provider and model id), or the shipped table; null when unknown. Also whether the price data marks the model deprecated, and its vendor's known retirement date (retired, retiring or scheduled) when there is one.",
    ok: {
      status: 200,
      description: "The model's prices",
      schema: object({
        object: { const: 'model.prices' },
        model: { type: 'string' },
        currency: { type: 'string' },
        priceData: { type: 'string' },
        deployments: { type: 'array' },
      }),
    },
  },
  {
    method: 'get',
    path: '/admin/v1/audit',
    access: 'admin',
    summary: 'The audit trail, newest first, paged.',
    query: 'AuditQueryDto',
    ok: { status: 200, description: 'Audit entries', schema: list() },
  },
  {
    method: 'get',
    path: '/admin/v1/usage',
    access: 'admin',
    summary: "Any team's (or every team's) usage.",
    query: 'UsageQueryDto',
    ok: { status: 200, description: 'Usage summary', schema: object({ object: { const: 'usage' } }) },
  },
  {
    method: 'get',
    path: '/admin/v1/requests',
    access: 'admin',
    summary:
      "Any team's (or every team's the caller may read) request log, newest first, filtered and paged.",
    query: 'RequestLogQueryDto',
    ok: { status: 200, description: 'Request log entries', schema: list() },
  },
  {
    method: 'get',
    path: '/admin/v1/requests/{id}',
    access: 'admin',
    summary:
      'One request: its entry, every attempt, and what was sent and answered (redacted) when its team keeps content.',
    ok: { status: 200, description: 'The entry', schema: object({ object: { const: 'request' } }) },
  },
  {
    method: 'get',
    path: '/admin/v1/usage/records',
    access: 'admin',
    summary: "A team's usage records, newest first.",
    query: 'UsageRecordsQueryDto',
    ok: { status: 200, description: 'Usage records', schema: list() },
  },
];

const SECURITY: Record<Access, Array<Record<string, string[]>>> = {
  team: [{ teamToken: [] }],
  admin: [{ adminKey: [] }, { consoleSession: [] }],
  metrics: [{}, { metricsToken: [] }],
  public: [],
};

/** OpenAI's error body: what every 4xx and 5xx of this API carries (streams: the same object in a data: event). */
const ERROR_SCHEMA: SchemaObject = object(
  {
    error: object(
      {
        message: { type: 'string' },
        type: { type: 'string' },
        param: { type: ['string', 'null'] },
        code: {
          type: ['string', 'null'],
          description: `One of: ${Object.keys(ERROR_CODES).join(', ')}; or an upstream's own code.`,
        },
      },
      ['message', 'type', 'param', 'code'],
    ),
  },
  ['error'],
);

/** The OpenAPI 3.1 document of the whole HTTP API, served at GET /openapi.json. */
export function buildOpenApiDocument(
  version: string,
  adminRoutes: readonly DeclaredRoute[] = [],
): Record<string, unknown> {
  const requirements = new Map(adminRoutes.map(({ route, requirement }) => [route, requirement]));
  const dtos = dtoSchemas();
  const paths: Record<string, Record<string, unknown>> = {};
  for (const operation of OPERATIONS) {
    const pathParams = [...operation.path.matchAll(/\{(\w+)\}/g)].map((match) => ({
      name: match[1],
      in: 'path',
      required: true,
      schema: { type: 'string' },
    }));
    const queryParams = operation.query ? queryParameters(dtos[operation.query]) : [];
    const errorResponse =
      operation.speaks === 'anthropic'
        ? {
            description: "An error in Anthropic's shape",
            content: { 'application/json': { schema: ref('AnthropicError') } },
          }
        : {
            description: "An error in OpenAI's shape",
            content: { 'application/json': { schema: ref('Error') } },
          };
    paths[operation.path] ??= {};
    paths[operation.path][operation.method] = {
      operationId: `${operation.method}${operation.path.replace(/[^A-Za-z0-9]+(.)?/g, (_m, c: string | undefined) => (c ? c.toUpperCase() : ''))}`,
      summary: operation.summary,
      ...permissionOf(requirements.get(`${operation.method.toUpperCase()} ${operation.path}`)),
      security:
        operation.speaks === 'anthropic'
          ? [...SECURITY[operation.access], { anthropicApiKey: [] }]
          : SECURITY[operation.access],
      parameters: [...pathParams, ...queryParams],
      ...(operation.body
        ? {
            requestBody: { required: true, content: { 'application/json': { schema: ref(operation.body) } } },
          }
        : {}),
      responses: {
        [String(operation.ok.status)]: {
          description: operation.ok.description,
          content: {
            [operation.ok.contentType ?? 'application/json']: {
              schema: operation.ok.schema ?? { type: 'object' },
            },
          },
        },
        '4XX': errorResponse,
        '5XX': errorResponse,
      },
    };
  }
  return {
    openapi: '3.1.0',
    info: {
      title: 'Switchyard',
      version,
      description:
        "An organisation-wide model gateway. Every error is OpenAI's error body, except on Anthropic's Messages routes (Anthropic's).",
    },
    paths,
    components: {
      securitySchemes: {
        teamToken: {
          type: 'http',
          scheme: 'bearer',
          description: 'A team token (sy-...), issued by an admin.',
        },
        anthropicApiKey: {
          type: 'apiKey',
          in: 'header',
          name: 'x-api-key',
          description: "A team token where Anthropic's clients put their key.",
        },
        adminKey: {
          type: 'http',
          scheme: 'bearer',
          description: 'The admin key (admin.apiKey), or a personal admin token (sy_admin_...).',
        },
        metricsToken: {
          type: 'http',
          scheme: 'bearer',
          description: 'server.metricsToken, when one is set.',
        },
        consoleSession: {
          type: 'apiKey',
          in: 'cookie',
          name: 'sy_console',
          description:
            'A console sign-in (POST /console/api/session); changes also need its X-CSRF-Token header.',
        },
      },
      schemas: {
        ...dtos,
        Error: ERROR_SCHEMA,
        AnthropicError: object(
          {
            type: { const: 'error' },
            error: object({ type: { type: 'string' }, message: { type: 'string' } }, ['type', 'message']),
            request_id: { type: 'string' },
          },
          ['type', 'error'],
        ),
        Team: object(
          {
            object: { const: 'team' },
            id: { type: 'string' },
            models: { type: 'array', items: { type: 'string' } },
            limits: ref('LimitSettings'),
            ceiling: {
              description:
                "The most a team-admin may give the team (its models and limits are always within it); null: none, the team's current values bound a team-admin.",
              oneOf: [ref('CeilingSettings'), { type: 'null' }],
            },
            disabled: { type: 'boolean' },
            selfServiceTokens: {
              type: 'boolean',
              description: 'Its team-members may keep team tokens of their own.',
            },
            responseCache: {
              type: 'boolean',
              description:
                'Its requests use the response cache of models that have one (false: opted out; docs/response-cache.md).',
            },
          },
          ['id'],
        ),
        ConsoleSession: object(
          {
            object: { const: 'console.session' },
            actor: { type: 'string' },
            person: {
              type: ['object', 'null'],
              description: 'The person signed in through SSO (null for an admin-key sign-in).',
              properties: {
                subject: { type: 'string' },
                email: { type: 'string' },
                name: { type: 'string' },
              },
            },
            roles: {
              type: 'array',
              items: { type: 'string' },
              description: 'e.g. org-admin, team-admin:<team>',
            },
            csrf_token: { type: 'string' },
            expires_at: { type: 'string' },
          },
          ['actor', 'csrf_token', 'expires_at'],
        ),
        AdminActor: object(
          {
            object: { const: 'admin.actor' },
            via: { enum: ['admin-key', 'console', 'personal-token'] },
            person: { type: ['object', 'null'] },
            roles: { type: 'array', items: { type: 'string' } },
            own_token_teams: {
              type: 'array',
              items: { type: 'string' },
              description:
                "The teams of the caller's team roles where they may keep team tokens of their own (tokens:own).",
            },
          },
          ['via', 'roles'],
        ),
        AdminToken: object(
          {
            object: { const: 'admin_token' },
            id: { type: 'string' },
            subject: { type: 'string' },
            name: { type: 'string' },
            prefix: { type: 'string' },
            status: { enum: ['active', 'revoked', 'expired'] },
            createdAt: { type: 'string' },
            expiresAt: { type: 'string' },
            lastUsedAt: { type: ['string', 'null'] },
            revokedAt: { type: ['string', 'null'] },
            token: { type: 'string', description: 'sy_admin_<id>_<secret>: only when issued.' },
          },
          ['id', 'subject', 'status'],
        ),
        TeamMember: object(
          {
            object: { const: 'team.member' },
            team: { type: 'string' },
            subject: { type: 'string' },
            role: { enum: ['team-admin', 'team-member'] },
            grantedAt: { type: 'string' },
            grantedBy: { type: 'string' },
          },
          ['team', 'subject', 'role'],
        ),
        Token: object(
          {
            id: { type: 'string' },
            team: { type: 'string' },
            status: { enum: ['active', 'revoked', 'expired'] },
            owner: {
              type: ['object', 'null'],
              description:
                "The person who keeps it (issued on /admin/v1/me/teams/{team}/tokens); null: the team's.",
              properties: { subject: { type: 'string' }, email: { type: 'string' } },
            },
            token: { type: 'string', description: 'Only when issued or rotated.' },
          },
          ['id', 'team'],
        ),
      },
    },
  };
}

/**
 * `x-permission` on an admin route: the permission its @Requires names, the roles that grant it
 * (access/permissions.ts) and where the route's team is (a path or query parameter, a token id's team; none for
 * an org permission or a list that shows the caller's teams only).
 */
function permissionOf(requirement: DeclaredRoute['requirement'] | undefined): Record<string, unknown> {
  if (!requirement) return {};
  const { scope, grantedTo } = PERMISSIONS[requirement.permission];
  const memberOnlyWhen = memberSwitchOf(requirement.permission);
  return {
    'x-permission': {
      name: requirement.permission,
      scope,
      grantedTo,
      // A team-member holds it only on a team with this setting on.
      ...(memberOnlyWhen ? { memberOnlyWhen } : {}),
      ...requirement.target,
    },
  };
}

function queryParameters(schema: SchemaObject | undefined): unknown[] {
  const properties = (schema?.properties ?? {}) as Record<string, SchemaObject>;
  const required = new Set((schema?.required as string[] | undefined) ?? []);
  return Object.entries(properties).map(([name, property]) => ({
    name,
    in: 'query',
    required: required.has(name),
    schema: property,
  }));
}

/** The MCP endpoint's operations at one path (docs/mcp.md): POST for messages, DELETE to end a 2025-era session. */
function mcpOperations(path: string, serves: string): Operation[] {
  return [
    {
      method: 'post',
      path,
      access: 'team',
      summary: `MCP over Streamable HTTP (JSON-RPC 2.0, the official SDK; 2026-07-28 and the 2025 revisions; docs/mcp.md): ${serves}. The token as Bearer or x-api-key; without one, 401 with WWW-Authenticate naming its RFC 9728 metadata. A 2025-era initialize answers an Mcp-Session-Id.`,
      ok: {
        status: 200,
        description: 'A JSON-RPC response (202 for a notification)',
        schema: object({ jsonrpc: { const: '2.0' } }),
      },
    },
    {
      method: 'get',
      path,
      access: 'team',
      summary: 'No server-to-client stream (405).',
      ok: { status: 405, description: 'A JSON-RPC error' },
    },
    {
      method: 'delete',
      path,
      access: 'team',
      summary: 'Ends the 2025-era session named by Mcp-Session-Id (204); its later use is 404.',
      ok: { status: 204, description: 'The session is ended' },
    },
  ];
}

/** RFC 9728 Protected Resource Metadata of an MCP path: where MCP clients learn how to authenticate. */
function protectedResourceMetadata(path: string, resource: string): Operation {
  return {
    method: 'get',
    path,
    access: 'public',
    summary: `RFC 9728 Protected Resource Metadata of ${resource}: where MCP clients learn how to authenticate.`,
    ok: {
      status: 200,
      description: 'Protected resource metadata',
      schema: object({ resource: { type: 'string' }, bearer_methods_supported: { type: 'array' } }, [
        'resource',
      ]),
    },
  };
}
