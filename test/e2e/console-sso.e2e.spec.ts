import type { Browser } from 'playwright-core';
import { launchChromium } from '../support/browser';
import {
  closeCheckedSessions,
  openConsoleBrowser,
  shot,
  type ConsoleBrowser,
} from '../support/console-browser';
import { OpenAIUpstream } from '../support/openai-upstream';
import { freeProviderPort, PROVIDER_HOST, TestOidcProvider } from '../support/oidc-provider';
import { oidcConfig, SSO_USERS } from '../support/sso-flow';
import { ADMIN_KEY, startTestGateway, type TestGateway } from '../support/test-gateway';

/**
 * The console's "Sign in with SSO" in a real browser (Debian's Chromium through playwright-core) against a real
 * OpenID Provider on another site (127.0.0.2: the provider's redirect back is cross-site, as in production): an
 * org-admin logs in at the provider and lands signed in where they started, their name (escaped) and roles in
 * the header; a person with no mapped group gets the refusal page and no session. The admin-key form is off
 * (console.adminKeySignIn: false).
 */
describe('the console signed in through the identity provider', () => {
  jest.setTimeout(120_000);
  let upstream: OpenAIUpstream;
  let gw: TestGateway;
  let provider: TestOidcProvider;
  let browser: Browser;
  const opened: ConsoleBrowser[] = [];

  beforeAll(async () => {
    browser = await launchChromium();
    upstream = await new OpenAIUpstream().start();
    const port = await freeProviderPort();
    gw = await startTestGateway({
      upstreamUrl: upstream.url,
      config: {
        auth: { oidc: oidcConfig(`http://${PROVIDER_HOST}:${port}`) },
        console: { adminKeySignIn: false },
      },
    });
    provider = await new TestOidcProvider(SSO_USERS).start(`${gw.url}/console/api/sso/callback`, port);
  }, 900_000); // installing Chromium from Debian's packages, on a machine without it
  afterAll(async () => {
    await browser?.close();
    await gw?.close();
    await provider?.stop();
    await upstream?.stop();
  });
  afterEach(() => closeCheckedSessions(opened, { adminKey: ADMIN_KEY, upstreamKey: 'upstream-secret-key' }));

  /** A browser of the test's own on the console's `hash`, signed out, at the sign-in page. */
  const atSignIn = async (hash = '') => {
    const session = await openConsoleBrowser(browser, gw.url);
    opened.push(session);
    await session.page.goto(`${gw.url}/console/${hash}`);
    await session.page.getByRole('link', { name: 'Sign in with SSO' }).waitFor();
    return session;
  };
  /** Every cookie the browser keeps for the gateway's host, whatever its path. */
  const gatewayCookies = async ({ context }: ConsoleBrowser) =>
    (await context.cookies()).filter((cookie) => cookie.domain === new URL(gw.url).hostname);
  /** At the provider's page (another site), logs in as `login`. */
  const logInAtProvider = async ({ page }: ConsoleBrowser, login: string) => {
    await page.getByRole('link', { name: 'Sign in with SSO' }).click();
    await page.waitForURL((url) => url.host.startsWith(PROVIDER_HOST));
    await page.getByLabel('Username').fill(login);
    await page.getByRole('button', { name: 'Log in' }).click();
  };

  it('signs an org-admin in through the provider, back where they started, with their name and roles', async () => {
    const session = await atSignIn('#/teams');
    const { page } = session;
    // The break-glass form is off here.
    expect(await page.getByLabel('Admin key').count()).toBe(0);
    await shot(page, 'sign-in-sso');
    await logInAtProvider(session, 'alice');
    await page.waitForURL(`${gw.url}/console/#/teams`);
    const who = page.locator('header .who');
    await who.getByText('Alice <b>Admin</b> (alice@example.com)').waitFor();
    // The name is text, not markup.
    expect(await who.locator('b').count()).toBe(0);
    expect(await who.locator('.roles').textContent()).toBe('org-admin');
    await page.getByRole('heading', { name: 'Teams' }).waitFor();
    // The session cookie is the console's usual one (HttpOnly, Strict); the flow's cookie is gone.
    const cookies = await gatewayCookies(session);
    expect(cookies.map(({ name, httpOnly, sameSite }) => ({ name, httpOnly, sameSite }))).toEqual([
      { name: 'sy_console', httpOnly: true, sameSite: 'Strict' },
    ]);
    await page.getByRole('button', { name: 'Sign out' }).click();
    await page.getByRole('link', { name: 'Sign in with SSO' }).waitFor();
  });

  it('refuses a person whose groups have no role: the refusal page, no session', async () => {
    const session = await atSignIn();
    await logInAtProvider(session, 'bob');
    await session.page.getByRole('heading', { name: 'Sign-in refused' }).waitFor();
    expect(await session.page.getByRole('alert').textContent()).toMatch(
      /^bob@example.com has no role in this console/,
    );
    expect((await gatewayCookies(session)).map((c) => c.name)).toEqual([]);
    await session.page.getByRole('link', { name: 'Back to the console' }).click();
    await session.page.getByRole('link', { name: 'Sign in with SSO' }).waitFor();
  });
});
