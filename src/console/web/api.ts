// The console talks only to the documented admin API (and its own sign-in), with the session cookie; every
// change carries the session's CSRF token.

export interface Session {
  actor: string;
  /** The person signed in through SSO; null for an admin-key sign-in. */
  person: { subject: string; email?: string; name?: string } | null;
  /** `org-admin`, `org-viewer`, `team-admin:<team>`, `team-member:<team>`. */
  roles: string[];
  csrf_token: string;
  expires_at: string;
}

export class ApiError extends Error {
  constructor(
    readonly status: number,
    message: string,
  ) {
    super(message);
  }
}

/** How one may sign in (GET /console/api/session/options). */
export interface SignInOptions {
  admin_key: boolean;
  sso: boolean;
}

let csrf = '';

export function useSession(session: Session | null): void {
  csrf = session?.csrf_token ?? '';
}

export async function api<T = any>(method: string, path: string, body?: unknown): Promise<T> {
  const headers: Record<string, string> = {};
  if (body !== undefined) headers['content-type'] = 'application/json';
  if (method !== 'GET') headers['x-csrf-token'] = csrf;
  const response = await fetch(path, {
    method,
    headers,
    body: body === undefined ? undefined : JSON.stringify(body),
    credentials: 'same-origin',
  });
  const text = await response.text();
  const json = text ? JSON.parse(text) : undefined;
  if (!response.ok)
    throw new ApiError(response.status, json?.error?.message ?? `${response.status} ${response.statusText}`);
  return json as T;
}

/** yyyy-mm-dd, UTC (the usage API's days). */
export function utcDay(date = new Date()): string {
  return date.toISOString().slice(0, 10);
}

export function monthStart(date = new Date()): string {
  return `${utcDay(date).slice(0, 8)}01`;
}

export function daysAgo(n: number): string {
  return utcDay(new Date(Date.now() - n * 86_400_000));
}

/** A row of GET /admin/v1/usage (the fields the console reads). */
export interface UsageRow {
  team: string;
  day?: string;
  model?: string;
  requests: number;
  requests_error: number;
  total_tokens: number;
  /** null when none of the row's requests had a price (cost_unknown_requests counts them). */
  cost_nanos: number | null;
  cost_unknown_requests: number;
}

export interface Usage {
  currency: string;
  data: UsageRow[];
}
