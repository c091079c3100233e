import { CLIENT_ID, CLIENT_SECRET, type TestUser } from './oidc-provider';

/**
 * The test provider's people: an org-admin (a name to escape), a team-admin who is also an org-viewer, nobody;
 * and one of each role alone: an org-viewer, a team-admin of team-a, a team-member of team-a.
 */
export const SSO_USERS: TestUser[] = [
  { login: 'alice', email: 'alice@example.com', name: 'Alice <b>Admin</b>', groups: ['switchyard-admins'] },
  {
    login: 'carol',
    email: 'carol@example.com',
    name: 'Carol',
    groups: ['team-a-leads', 'switchyard-viewers'],
  },
  { login: 'bob', email: 'bob@example.com', name: 'Bob', groups: ['sales'] },
  { login: 'vera', email: 'vera@example.com', name: 'Vera', groups: ['switchyard-viewers'] },
  { login: 'dave', email: 'dave@example.com', name: 'Dave', groups: ['team-a-leads'] },
  { login: 'erin', email: 'erin@example.com', name: 'Erin', groups: ['team-a-people'] },
];

/** auth.oidc.groupRoles of the SSO tests. */
export const GROUP_ROLES = {
  'switchyard-admins': 'org-admin',
  'switchyard-viewers': 'org-viewer',
  'team-a-leads': 'team-admin:team-a',
  'team-a-people': 'team-member:team-a',
};

/** auth.oidc for a provider at `issuer`. */
export const oidcConfig = (issuer: string) => ({
  issuer,
  clientId: CLIENT_ID,
  clientSecret: CLIENT_SECRET,
  scopes: ['openid', 'email', 'profile', 'groups'],
  groupRoles: GROUP_ROLES,
});

/** Cookies of one site, as a browser keeps them (name -> value; a cleared cookie is gone). */
export class CookieJar {
  readonly cookies = new Map<string, string>();
  /** The Set-Cookie lines of the last response, for checking their attributes. */
  lastSet: string[] = [];

  take(response: Response): Response {
    this.lastSet = response.headers.getSetCookie();
    for (const line of this.lastSet) {
      const [pair] = line.split(';');
      const at = pair.indexOf('=');
      const [name, value] = [pair.slice(0, at).trim(), pair.slice(at + 1).trim()];
      if (!value || /expires=Thu, 01 Jan 1970/i.test(line)) this.cookies.delete(name);
      else this.cookies.set(name, value);
    }
    return response;
  }

  header(): string {
    return [...this.cookies].map(([name, value]) => `${name}=${value}`).join('; ');
  }

  async get(url: string | URL, headers: Record<string, string> = {}): Promise<Response> {
    return this.take(
      await fetch(url, { redirect: 'manual', headers: { cookie: this.header(), ...headers } }),
    );
  }
}

export const locationOf = (response: Response, base: string | URL) =>
  new URL(response.headers.get('location') ?? '(no location)', base);

/**
 * A browser's way through a console SSO sign-in, redirects followed by hand: the gateway's start, the provider's
 * authorization endpoint and its sign-in form (as `login`), up to the redirect back to the gateway's callback,
 * which is returned unfollowed (with the gateway's cookies) for the test to send as it is, or altered.
 */
export async function throughProvider(
  gatewayUrl: string,
  login: string,
  returnTo?: string,
): Promise<{ gateway: CookieJar; authorization: URL; callback: URL }> {
  const gateway = new CookieJar();
  const provider = new CookieJar();
  const query = returnTo === undefined ? '' : `?${new URLSearchParams({ return: returnTo })}`;
  const start = await gateway.get(`${gatewayUrl}/console/api/sso/start${query}`);
  if (start.status !== 302) throw new Error(`start: ${start.status} ${await start.text()}`);
  const authorization = locationOf(start, gatewayUrl);
  const interaction = locationOf(await provider.get(authorization), authorization);
  const loggedIn = provider.take(
    await fetch(`${interaction.href}/login`, {
      method: 'POST',
      redirect: 'manual',
      headers: { cookie: provider.header(), 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ login }),
    }),
  );
  const resume = locationOf(loggedIn, interaction);
  const callback = locationOf(await provider.get(resume), resume);
  if (!callback.searchParams.has('code')) throw new Error(`no code in ${callback.href}`);
  return { gateway, authorization, callback };
}
