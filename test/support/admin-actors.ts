import { ConsoleSessions, CONSOLE_COOKIE, CSRF_HEADER } from '../../src/auth/console-sessions';
import type { Person, Role } from '../../src/access/roles';
import type { TestGateway } from './test-gateway';

/** A person signed in to the console, as a test makes one: call the admin API with their cookie and CSRF token. */
export interface SignedIn {
  call(method: string, path: string, body?: unknown): Promise<{ status: number; body: any }>;
}

/**
 * Opens a console session for `person` with `roles` straight through ConsoleSessions (the test seam: the
 * identity provider's sign-in that makes these sessions is a feature of its own).
 */
export async function signedIn(gw: TestGateway, person: Person, roles: Role[]): Promise<SignedIn> {
  const sessions = gw.gateway.app.get(ConsoleSessions);
  const { id, session } = await sessions.open(person.email ?? person.subject, { person, roles });
  return {
    async call(method, path, body) {
      const response = await fetch(`${gw.url}${path}`, {
        method,
        headers: {
          cookie: `${CONSOLE_COOKIE}=${id}`,
          [CSRF_HEADER]: session.csrf,
          ...(body === undefined ? {} : { 'content-type': 'application/json' }),
        },
        body: body === undefined ? undefined : JSON.stringify(body),
      });
      const text = await response.text();
      return { status: response.status, body: text ? JSON.parse(text) : undefined };
    },
  };
}

/**
 * Signs a browser context in as `person` with `roles`: a session opened as signedIn does, its cookie put in the
 * context's jar (the page reads its CSRF token from GET /console/api/session when it loads, as after a reload).
 */
export async function browserSignedIn(
  context: { addCookies(cookies: Array<{ name: string; value: string; url: string }>): Promise<void> },
  gw: TestGateway,
  person: Person,
  roles: Role[],
): Promise<void> {
  const { id } = await gw.gateway.app
    .get(ConsoleSessions)
    .open(person.email ?? person.subject, { person, roles });
  await context.addCookies([{ name: CONSOLE_COOKIE, value: id, url: gw.url }]);
}
