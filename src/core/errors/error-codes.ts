/**
 * Every error the gateway answers with, its HTTP status and OpenAI error `type`.
 * One row per code: the error table in docs/api.md is this table.
 */
export const ERROR_CODES = {
  invalid_api_key: { status: 401, type: 'invalid_request_error' },
  token_expired: { status: 401, type: 'invalid_request_error' },
  /** A team token asked for another team's usage; an admin API caller's roles do not allow the route (access/). */
  permission_denied: { status: 403, type: 'invalid_request_error' },
  /** A console change (admin API call with the session cookie) without the session's X-CSRF-Token. */
  csrf_token_invalid: { status: 403, type: 'invalid_request_error' },
  /**
   * A console sign-in through the identity provider that could not be verified (state, code or ID token refused,
   * the flow expired or was used already): no session is opened.
   */
  sso_failed: { status: 401, type: 'invalid_request_error' },
  model_not_allowed: { status: 403, type: 'invalid_request_error' },
  /**
   * The model is configured but cannot be served as configured (its backend needs an API key and has none): only
   * the gateway's operator can fix it, so a status clients do not retry (the SDKs retry 408, 409, 429 and 5xx; a
   * 503 kept Claude Code retrying for minutes), in each API's permission shape (OpenAI PermissionDeniedError,
   * Anthropic permission_error). Not a 404: Claude Code answers a 404 with its own text and drops the message,
   * which names the variable to set.
   */
  model_unavailable: { status: 403, type: 'invalid_request_error' },
  model_not_found: { status: 404, type: 'invalid_request_error' },
  not_found: { status: 404, type: 'invalid_request_error' },
  team_not_found: { status: 404, type: 'invalid_request_error' },
  token_not_found: { status: 404, type: 'invalid_request_error' },
  /** No membership granted to that subject in that team (roles from the identity provider are not memberships). */
  member_not_found: { status: 404, type: 'invalid_request_error' },
  /** A stored Responses API response that is not there: never stored, expired, deleted, or another team's. */
  response_not_found: { status: 404, type: 'invalid_request_error' },
  /** `previous_response_id` names no response this team can continue (same cases as response_not_found). */
  previous_response_not_found: { status: 404, type: 'invalid_request_error' },
  team_exists: { status: 409, type: 'invalid_request_error' },
  team_has_tokens: { status: 409, type: 'invalid_request_error' },
  /** A team changed by others so often during an update that it could not be merged (retry it). */
  team_update_conflict: { status: 409, type: 'invalid_request_error' },
  invalid_request: { status: 400, type: 'invalid_request_error' },
  invalid_json: { status: 400, type: 'invalid_request_error' },
  request_too_large: { status: 413, type: 'invalid_request_error' },
  /** Node refused the request before the gateway saw it (common/http/client-errors.ts). */
  request_header_too_large: { status: 431, type: 'invalid_request_error' },
  request_timeout: { status: 408, type: 'invalid_request_error' },
  unsupported_media_type: { status: 415, type: 'invalid_request_error' },
  /** A per-minute limit of the team or token (also an upstream's 429, with the upstream's type). */
  rate_limit_exceeded: { status: 429, type: 'rate_limit_exceeded' },
  /** A per-day or per-month token quota of the team or token. */
  quota_exceeded: { status: 429, type: 'rate_limit_exceeded' },
  /** A per-day or per-month spend budget of the team or token (OpenAI's own type for running out of money). */
  budget_exceeded: { status: 429, type: 'insufficient_quota' },
  upstream_error: { status: 502, type: 'server_error' },
  upstream_auth_failed: { status: 502, type: 'server_error' },
  upstream_unreachable: { status: 502, type: 'server_error' },
  upstream_unavailable: { status: 503, type: 'server_error' },
  /** Every connection to the backend is in use and none freed within timeouts.connectionWaitMs (Retry-After). */
  upstream_busy: { status: 503, type: 'server_error' },
  upstream_timeout: { status: 504, type: 'server_error' },
  /** The identity provider (auth.oidc.issuer) did not answer, or not as OpenID Connect: try again later. */
  sso_unavailable: { status: 503, type: 'server_error' },
  auth_unavailable: { status: 503, type: 'server_error' },
  limits_unavailable: { status: 503, type: 'server_error' },
  store_unavailable: { status: 503, type: 'server_error' },
  /** New requests while draining, and streams still open when the drain's grace period ends (in-band). */
  server_shutting_down: { status: 503, type: 'server_error' },
  internal_error: { status: 500, type: 'server_error' },
} as const satisfies Record<string, { status: number; type: string }>;

export type ErrorCode = keyof typeof ERROR_CODES;
