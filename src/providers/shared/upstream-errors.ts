import { GatewayException } from '../../common/errors/gateway.exception';

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
  for (const key of keys) for (const form of [key, encodeURIComponent(key)]) out = out.split(form).join('[redacted]');
  out = out.replace(KEY_LIKE_WORD, (word) => (keys.some((key) => sharesFragment(word, key)) ? '[redacted]' : word));
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
 * One documented status per upstream outcome (see the README's error table):
 * the client's own mistakes (400/409/413/422) pass through with the vendor's words;
 * the gateway's credentials failing (401/403) or an upstream model that does not
 * exist (404) is the gateway's configuration, so 502; 429 keeps its
 * Retry-After; 5xx become 502 (503 stays 503).
 */
export function mapUpstreamError(facts: UpstreamErrorFacts): GatewayException {
  const vendorMessage = facts.message ? scrub(facts.message, facts.secrets) : undefined;
  const said = vendorMessage ? `: ${vendorMessage}` : '';
  const code = typeof facts.code === 'string' ? facts.code : null;
  const { status, backendId } = facts;

  if (status === 401 || status === 403) {
    return new GatewayException('upstream_auth_failed', `Backend "${backendId}" rejected the gateway's credentials.`);
  }
  if (status === 429) {
    const headers: Record<string, string> = {};
    for (const name of ['retry-after', 'retry-after-ms']) {
      const value = header(facts.headers, name);
      if (value) headers[name] = value;
    }
    return new GatewayException('rate_limit_exceeded', `Backend "${backendId}" is rate limiting${said || '.'}`, {
      type: facts.type ?? 'rate_limit_error',
      wireCode: code ?? 'rate_limit_exceeded',
      headers,
    });
  }
  if (status === 400 || status === 409 || status === 413 || status === 422) {
    return new GatewayException('invalid_request', vendorMessage ?? `Backend "${backendId}" rejected the request.`, {
      status: status === 413 ? 413 : 400,
      type: facts.type ?? 'invalid_request_error',
      param: facts.param ?? null,
      wireCode: code,
    });
  }
  if (status === 408 || status === 504) {
    return new GatewayException('upstream_timeout', `Backend "${backendId}" timed out (HTTP ${status}).`);
  }
  if (status === 503 || status === 529) {
    return new GatewayException('upstream_unavailable', `Backend "${backendId}" is overloaded or unavailable${said || '.'}`, {
      headers: header(facts.headers, 'retry-after') ? { 'retry-after': header(facts.headers, 'retry-after')! } : {},
    });
  }
  return new GatewayException('upstream_error', `Backend "${backendId}" failed with HTTP ${status}${said || '.'}`);
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
