import { hostname, userInfo } from 'node:os';
import { urlOf, type AdminCall } from './admin-routes';
import { CredentialStore, gatewayUrl } from './credentials';

/** A gateway the CLI talks to over HTTP, and the credential it shows there. */
export interface GatewayTarget {
  url: string;
  credential: { kind: 'personal-token'; token: string } | { kind: 'admin-key'; key: string };
}

/** What the gateway answered other than 2xx, in its own words (status, error code, message). */
export class GatewayRefusal extends Error {
  constructor(
    readonly status: number,
    readonly code: string | undefined,
    message: string,
  ) {
    super(`${status}${code ? ` ${code}` : ''}: ${message}`);
  }
}

/**
 * The gateway later commands talk to, or undefined for the operators' mode (Redis, by SWITCHYARD_CONFIG): `--url`,
 * else SWITCHYARD_URL, else the gateway of the last `switchyard login`; `--local` keeps Redis whatever is stored.
 * The credential is the login kept for that gateway, else the admin key in SWITCHYARD_ADMIN_KEY.
 */
export function gatewayTarget(
  flags: { url?: string; local?: boolean },
  env: NodeJS.ProcessEnv = process.env,
  store = new CredentialStore(),
): GatewayTarget | undefined {
  if (flags.local) return undefined;
  const named = flags.url ?? env.SWITCHYARD_URL;
  const url = named ? gatewayUrl(named) : store.defaultUrl();
  if (!url) return undefined;
  const login = store.get(url);
  if (login) return { url, credential: { kind: 'personal-token', token: login.token } };
  if (env.SWITCHYARD_ADMIN_KEY)
    return { url, credential: { kind: 'admin-key', key: env.SWITCHYARD_ADMIN_KEY } };
  throw new Error(
    `not signed in to ${url}: run \`switchyard login --url ${url}\` (or set SWITCHYARD_ADMIN_KEY, the admin key)`,
  );
}

/**
 * One admin API call with the target's credential; the body it answers (a list's `data`), or a GatewayRefusal with
 * the API's own message. With the admin key the audit trail names the operator as `cli:<user>@<host>`.
 */
export async function callGateway(target: GatewayTarget, call: AdminCall): Promise<unknown> {
  const secret =
    target.credential.kind === 'personal-token' ? target.credential.token : target.credential.key;
  const response = await fetch(urlOf(target.url, call), {
    method: call.method,
    headers: {
      authorization: `Bearer ${secret}`,
      accept: 'application/json',
      ...(target.credential.kind === 'admin-key'
        ? { 'x-switchyard-actor': `cli:${userInfo().username}@${hostname()}` }
        : {}),
      ...(call.body ? { 'content-type': 'application/json' } : {}),
    },
    body: call.body ? JSON.stringify(call.body) : undefined,
    signal: AbortSignal.timeout(60_000),
  });
  const body = await answerOf(response);
  if (isList(body)) return body.data;
  return body;
}

/** The JSON a gateway answered; a refusal (not 2xx) thrown with its status, code and message. */
export async function answerOf(response: Response): Promise<unknown> {
  const text = await response.text();
  let body: unknown;
  try {
    body = text ? JSON.parse(text) : undefined;
  } catch {
    body = undefined;
  }
  if (!response.ok) {
    const error = (body as { error?: { code?: string; message?: string } } | undefined)?.error;
    throw new GatewayRefusal(
      response.status,
      error?.code,
      error?.message ?? (text.slice(0, 200) || response.statusText),
    );
  }
  if (body === undefined) throw new Error(`the gateway answered ${response.status} without JSON`);
  return body;
}

function isList(body: unknown): body is { object: 'list'; data: unknown } {
  return typeof body === 'object' && body !== null && (body as { object?: unknown }).object === 'list';
}
