import { ERROR_CODES } from '../core/errors/error-codes';
import { GatewayException } from '../core/errors/gateway.exception';

const OWN_TYPES = new Set<string>(Object.values(ERROR_CODES).map((entry) => entry.type));

export interface UpstreamErrorFacts {
  backendId: string;
  status: number;
  /** The vendor's own message, type and code, when its body had them. */
  message?: string;
  type?: string;
  code?: string | null;
  param?: string | null;
  headers: Record<string, string | string[] | undefined>;
  /** Strings that must never reach a client (the backend's API key). */
  secrets: Array<string | undefined>;
}

function header(headers: UpstreamErrorFacts['headers'], name: string): string | undefined {
  const value = headers[name];
  return Array.isArray(value) ? value[0] : value;
}

/** A word made of characters keys are made of; vendors mask the middle of a key with `*`. */
const KEY_LIKE_WORD = /[A-Za-z0-9_\-+/=.*%]{8,}/g;
/** A piece of a configured key this long, anywhere in a message, is taken to be the key. */
const MIN_FRAGMENT = 8;

/**
 * Removes configured keys from a vendor's message in any form: whole, URL-encoded, without their vendor prefix
 * (`sk-`, `sk-ant-api03-`), truncated or masked (`abc***xyz`): any word that contains, or is, a piece of at least
 * MIN_FRAGMENT characters of a configured key is redacted. Anything else key-shaped is dropped as well.
 */
export function scrub(text: string, secrets: Array<string | undefined>): string {
  const keys = secrets.filter((secret): secret is string => typeof secret === 'string' && secret.length >= 4);
  let out = text;
  for (const key of keys)
    for (const form of [key, encodeURIComponent(key)]) out = out.split(form).join('[redacted]');
  out = out.replace(KEY_LIKE_WORD, (word) =>
    keys.some((key) => sharesFragment(word, key)) ? '[redacted]' : word,
  );
  // Vendors echo partial keys of other credentials too ("Incorrect API key provided: sk-abc***xyz").
  return out.replace(/\b(sk|sy|key)-[A-Za-z0-9_*.-]{6,}/g, '[redacted]');
}

function sharesFragment(word: string, key: string): boolean {
  for (const piece of decodeSafely(word).split('*')) {
    if (piece.length >= MIN_FRAGMENT && key.includes(piece)) return true;
  }
  // A word that holds the key's own tail (the key without its prefix, or with text glued to it).
  for (let at = 0; at + MIN_FRAGMENT <= key.length; at += MIN_FRAGMENT) {
    if (word.includes(key.slice(at, at + MIN_FRAGMENT))) return true;
  }
  return false;
}

function decodeSafely(word: string): string {
  try {
    return decodeURIComponent(word);
  } catch {
    return word;
  }
}

/**
 * The strings of a backend's config that must never reach a client: its API key, and the values of its extra
 * headers that carry credentials (`api-key`, `x-api-key`, an `Authorization` set in `headers`...).
 */
export function backendSecrets(config: { apiKey?: string; headers?: Record<string, string> }): string[] {
  const secrets = config.apiKey ? [config.apiKey] : [];
  for (const [name, value] of Object.entries(config.headers ?? {})) {
    if (/auth|key|token|secret/i.test(name) && typeof value === 'string')
      secrets.push(value.replace(/^(Bearer|Basic)\s+/i, ''));
  }
  return secrets;
}

/** A Retry-After value as HTTP defines it (seconds, or a date): anything else a vendor put there is dropped. */
function retryAfterValue(value: string | undefined): string | undefined {
  if (value === undefined) return undefined;
  const trimmed = value.trim();
  return /^\d+(\.\d+)?$/.test(trimmed) ||
    (/^[A-Za-z]{3}, \d{2} [A-Za-z]{3} \d{4} [\d:]{8} GMT$/.test(trimmed) &&
      !Number.isNaN(Date.parse(trimmed)))
    ? trimmed
    : undefined;
}

/**
 * One documented status per upstream outcome (see the error table in docs/api.md):
 * the client's own mistakes (400/409/413/422) pass through with the vendor's words;
 * the gateway's credentials failing (401/403) or an upstream model that does not
 * exist (404) is the gateway's configuration, so 502 (and the deployment's fault:
 * never called again for the request); 429 keeps its Retry-After; 5xx become 502
 * (503 stays 503).
 *
 * Every string the vendor sent is scrubbed of the backend's keys before it goes anywhere: the message, and the
 * type, code and param that some errors pass through (vendors have echoed keys in each of them).
 */
export function mapUpstreamError(facts: UpstreamErrorFacts): GatewayException {
  const clean = (text: string | null | undefined): string | undefined =>
    typeof text === 'string' ? scrub(text, facts.secrets) : undefined;
  const vendorMessage = clean(facts.message);
  const said = vendorMessage ? `: ${vendorMessage}` : '';
  const code = clean(facts.code) ?? null;
  const type = clean(facts.type);
  const param = clean(facts.param) ?? null;
  const { status, backendId } = facts;
  const upstream = { status, message: vendorMessage };

  if (status === 401 || status === 403) {
    return new GatewayException(
      'upstream_auth_failed',
      `Backend "${backendId}" rejected the gateway's credentials.`,
      { deploymentFault: true, upstream },
    );
  }
  if (status === 429) {
    const headers: Record<string, string> = {};
    for (const name of ['retry-after', 'retry-after-ms']) {
      const value = retryAfterValue(header(facts.headers, name));
      if (value) headers[name] = value;
    }
    return new GatewayException(
      'rate_limit_exceeded',
      `Backend "${backendId}" is rate limiting${said || '.'}`,
      {
        type: type ?? 'rate_limit_error',
        wireCode: code ?? 'rate_limit_exceeded',
        headers,
        upstream,
      },
    );
  }
  if (status === 400 || status === 409 || status === 413 || status === 422) {
    return new GatewayException(
      'invalid_request',
      vendorMessage ?? `Backend "${backendId}" rejected the request.`,
      {
        status: status === 413 ? 413 : 400,
        type: type ?? 'invalid_request_error',
        param,
        wireCode: code,
        upstream,
      },
    );
  }
  if (status === 404) {
    return new GatewayException(
      'upstream_error',
      `Backend "${backendId}" failed with HTTP 404${said || '.'}`,
      { deploymentFault: true, upstream },
    );
  }
  if (status === 408 || status === 504) {
    return new GatewayException('upstream_timeout', `Backend "${backendId}" timed out (HTTP ${status}).`, {
      upstream,
    });
  }
  if (status === 503 || status === 529) {
    const retryAfter = retryAfterValue(header(facts.headers, 'retry-after'));
    return new GatewayException(
      'upstream_unavailable',
      `Backend "${backendId}" is overloaded or unavailable${said || '.'}`,
      {
        headers: retryAfter ? { 'retry-after': retryAfter } : {},
        upstream,
      },
    );
  }
  return new GatewayException(
    'upstream_error',
    `Backend "${backendId}" failed with HTTP ${status}${said || '.'}`,
    { upstream },
  );
}

/**
 * The same error with every string scrubbed of `secrets` (message, type, param, code, headers, what the upstream
 * said): the last line of defence for errors built from a vendor's words outside mapUpstreamError (a stream's
 * in-band error events are read by mappers that hold no keys).
 */
export function scrubError(error: GatewayException, secrets: Array<string | undefined>): GatewayException {
  const clean = (text: string) => scrub(text, secrets);
  // The gateway's own codes and types are left as they are (a key that happens to share 8 letters with one must
  // not turn `upstream_error` into `[redacted]`); anything else may be the vendor's.
  const message = clean(error.message);
  const type = OWN_TYPES.has(error.type) ? error.type : clean(error.type);
  const param = error.param === null ? null : clean(error.param);
  const wireCode =
    error.wireCode === null || Object.hasOwn(ERROR_CODES, error.wireCode)
      ? error.wireCode
      : clean(error.wireCode);
  const headers = Object.fromEntries(
    Object.entries(error.headers).map(([name, value]) => [name, clean(value)]),
  );
  const upstreamMessage = error.upstream?.message === undefined ? undefined : clean(error.upstream.message);
  const same =
    message === error.message &&
    type === error.type &&
    param === error.param &&
    wireCode === error.wireCode &&
    upstreamMessage === error.upstream?.message &&
    Object.entries(headers).every(([name, value]) => value === error.headers[name]);
  if (same) return error;
  return new GatewayException(error.code, message, {
    status: error.status,
    type,
    param,
    wireCode,
    headers,
    atCapacity: error.atCapacity,
    deploymentFault: error.deploymentFault,
    upstream: error.upstream && { status: error.upstream.status, message: upstreamMessage },
    cause: error.cause,
  });
}

/**
 * Whether an error from a backend call counts as the backend failing (`switchyard_upstream_errors_total`):
 * yes for its 5xx-class outcomes, timeouts and rate limits; no for the client's own mistakes that it relayed
 * (invalid_request, 400/413), which say nothing about the backend's health, nor the gateway's own shutdown.
 */
export function isUpstreamFailure(error: GatewayException): boolean {
  // The gateway's own shutdown cut a call short: a 503, but nothing the backend did.
  if (error.code === 'server_shutting_down') return false;
  return error.status >= 500 || error.status === 429;
}
