import type { McpServerConfig } from '../config/config.schema';
import { markerOf, type Detector } from '../request-log/redaction/detector';
import type { Redactor } from '../request-log/redaction/redactor';

/** A server's error as the gateway keeps or shows it (last_error, logs, the client's MCP error): at most this long. */
export const MAX_ERROR_CHARS = 500;

/**
 * Configured values (and their space-separated parts) shorter than this are not looked for: an env value such as
 * `1`, `true` or `warning` is no credential, and replacing it would garble every answer. A credential is longer.
 */
const MIN_SECRET_CHARS = 8;

/** Authorization scheme words: the part of `Bearer <token>` that is the same for everyone, never looked for alone. */
const SCHEME_WORDS = new Set([
  'basic',
  'bearer',
  'digest',
  'token',
  'negotiate',
  'apikey',
  'api-key',
  'dpop',
  'hoba',
  'mutual',
]);

/**
 * The detector (the request log's Detector, so it composes with its Redactor) of one server's own credentials: every
 * value of its configured `headers` and `env`, and of its `url`'s query parameters and userinfo (user, password),
 * each whitespace-separated part too (the token of `Bearer <token>`): as written, JSON-escaped, URL-encoded and
 * base64-encoded (standard and URL-safe, padded or not, or followed by more), in any case (`BEARER GHP_...`): the
 * forms a server echoing what it was sent would use. A match becomes `[mcp_credential]`. One regular expression
 * over the text, built once: it runs on every answer.
 */
export function credentialDetector(config: McpServerConfig): Detector {
  const secrets = new Set<string>();
  for (const value of configuredSecrets(config)) {
    for (const part of [value, ...value.split(/\s+/)]) {
      if (part.length < MIN_SECRET_CHARS || SCHEME_WORDS.has(part.toLowerCase())) continue;
      secrets.add(part);
      secrets.add(JSON.stringify(part).slice(1, -1));
      secrets.add(encodeURIComponent(part));
      for (const encoded of base64Forms(part)) secrets.add(encoded);
    }
  }
  // Longest first: `Bearer <token>` is replaced whole before its token alone is looked for (an alternation takes
  // the first alternative that matches).
  const sought = [...secrets].filter((s) => s.length >= MIN_SECRET_CHARS).sort((a, b) => b.length - a.length);
  const marker = markerOf('mcp_credential');
  const pattern = sought.length ? new RegExp(sought.map(escapeRegExp).join('|'), 'gi') : null;
  return {
    kind: 'mcp_credential',
    redact(text) {
      if (!pattern) return text;
      pattern.lastIndex = 0;
      return text.replace(pattern, marker);
    },
  };
}

/** The configured values that are credentials: headers, env, and the url's query values and userinfo. */
function configuredSecrets(config: McpServerConfig): string[] {
  const values = [...Object.values(config.headers ?? {}), ...Object.values(config.env ?? {})];
  if (config.url && URL.canParse(config.url)) {
    const url = new URL(config.url);
    for (const value of url.searchParams.values()) values.push(value);
    for (const raw of [url.username, url.password].filter(Boolean)) values.push(raw, safeDecode(raw));
  }
  return values;
}

/**
 * A value's base64 forms (standard and URL-safe): the whole encoding without its padding, and the part of it that
 * stays the same when more bytes follow the value (its first whole 3-byte groups), so the value is found encoded
 * alone, padded or not, or at the start of a longer encoded text. A value inside a longer encoded text (`user:token`
 * in Basic auth) starts 0, 1 or 2 bytes into a 3-byte group: for 1 and 2, the characters that depend on the value's
 * bytes alone (after the first group, which mixes in the bytes before it, up to its last whole group) are looked for
 * too. Fragments shorter than MIN_SECRET_CHARS are dropped by the caller, so short ones do not match noise.
 */
function base64Forms(value: string): string[] {
  const bytes = Buffer.from(value, 'utf8');
  const stable = Math.floor(bytes.length / 3) * 4;
  return (['base64', 'base64url'] as const).flatMap((encoding) => {
    const whole = bytes.toString(encoding).replace(/=+$/, '');
    const shifted = [1, 2].map((filler) => {
      const encoded = Buffer.concat([Buffer.alloc(filler), bytes]).toString(encoding);
      return encoded.slice(4, Math.floor((filler + bytes.length) / 3) * 4);
    });
    return [whole, whole.slice(0, stable), ...shifted];
  });
}

function safeDecode(text: string): string {
  try {
    return decodeURIComponent(text);
  } catch {
    return text;
  }
}

function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&');
}

/**
 * What the gateway lets out of what one server said: its credentials never, wherever the text goes. A server may
 * echo what it was sent (an error body quoting the Authorization header, a local server printing its env), and the
 * gateway sent it its credentials.
 */
export class UpstreamRedaction {
  private readonly credential: Detector;

  constructor(
    config: McpServerConfig,
    /** The request log's one policy (RequestLogRedactor), for what the gateway keeps: last_error and its log. */
    private readonly policy: Redactor,
  ) {
    this.credential = credentialDetector(config);
  }

  /** Text the gateway keeps or logs (last_error, log lines): credentials out, the request log's policy, bounded. */
  kept(text: string): string {
    return bounded(this.policy.redactText(this.credential.redact(text)));
  }

  /** An error message for the client: credentials out, bounded, otherwise as the server wrote it. */
  message(text: string): string {
    return bounded(this.credential.redact(text));
  }

  /**
   * An answer of the server's (a result, an error's data) for the client and the request log: the same value, or,
   * when its JSON text holds a credential, a copy with the credential replaced in every string, object keys too (a
   * server may key a map by what it was sent: structuredContent, _meta, a schema's property names).
   */
  answer<T>(value: T): T {
    if (value === undefined) return value;
    const json = JSON.stringify(value);
    if (json === undefined || this.credential.redact(json) === json) return value;
    return this.copy(JSON.parse(json)) as T;
  }

  /**
   * A parsed JSON value with the credential replaced in its strings and keys. Two keys of one object that redact to
   * the same text both stay: the later ones get `#2`, `#3`... (dropping one would hide data the server sent).
   */
  private copy(item: unknown): unknown {
    if (typeof item === 'string') return this.credential.redact(item);
    if (Array.isArray(item)) return item.map((entry) => this.copy(entry));
    if (item === null || typeof item !== 'object') return item;
    const out: Record<string, unknown> = {};
    for (const [key, entry] of Object.entries(item as Record<string, unknown>)) {
      const redacted = this.credential.redact(key);
      let name = redacted;
      for (let n = 2; Object.hasOwn(out, name); n++) name = `${redacted}#${n}`;
      // defineProperty: a `__proto__` key stays a key, as JSON.parse made it.
      Object.defineProperty(out, name, {
        value: this.copy(entry),
        enumerable: true,
        writable: true,
        configurable: true,
      });
    }
    return out;
  }
}

function bounded(text: string): string {
  return text.length <= MAX_ERROR_CHARS ? text : `${text.slice(0, MAX_ERROR_CHARS - 1)}…`;
}
