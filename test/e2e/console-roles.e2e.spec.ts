import type { Browser, Page } from 'playwright-core';
import { LIMIT_CATALOGUE } from '../../src/core/limit-catalogue';
import { launchChromium } from '../support/browser';
import {
  closeCheckedSessions,
  openConsoleBrowser,
  shot,
  TOKEN_SECRET,
  type ConsoleBrowser,
} from '../support/console-browser';
import { eventually } from '../support/eventually';
import { OpenAIUpstream } from '../support/openai-upstream';
import { freeProviderPort, PROVIDER_HOST, TestOidcProvider } from '../support/oidc-provider';
import { oidcConfig, SSO_USERS } from '../support/sso-flow';
import { ADMIN_KEY, startTestGateway, type TestGateway } from '../support/test-gateway';

/**
 * The console shows each person what their roles allow (signed in through SSO, in Debian's Chromium): an
 * org-admin every button (and a team's ceiling to set), an org-viewer everything read-only, a team-admin of team-a
 * their team only with its tokens, members, and models and limits within its ceiling, a team-member their teams'
 * usage and spend alone. Each check waits for the page to have loaded what it shows before counting what it must
 * not show. Everyone signed in has My tokens: their personal admin tokens, and their own team tokens where a team
 * allows it. Hiding is a convenience: the admin API
 * refuses on its own (admin-roles.e2e), and a refusal's message is what the page shows.
 */
describe('the console by role', () => {
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
        // A priced model: team-a has a budget, and a budget refuses a model without a price.
        models: { priced: { backend: 'standin', upstreamModel: 'echo', price: { input: 2, output: 8 } } },
      },
    });
    provider = await new TestOidcProvider(SSO_USERS).start(`${gw.url}/console/api/sso/callback`, port);
    // team-a: a token, one request of usage, a daily token quota and budget; team-b: a token and a granted member.
    await gw.admin('POST', '/admin/v1/teams', {
      id: 'team-a',
      limits: { tokensPerDay: 100_000, budgetPerDay: 5 },
    });
    const a = await gw.teamToken('team-a');
    await gw.teamToken('team-b');
    await gw.openai(a.token).chat.completions.create({
      model: 'priced',
      max_tokens: 10,
      messages: [{ role: 'user', content: 'hello' }],
    });
    await eventually(async () => {
      const today = new Date().toISOString().slice(0, 10);
      const usage = await gw.admin(
        'GET',
        `/admin/v1/usage?team=team-a&from=${today}&to=${today}&groupBy=model`,
      );
      expect(usage.body.data).toHaveLength(1);
    }, 10_000);
    // team-a lets its members keep their own tokens; team-b does not.
    expect((await gw.admin('PATCH', '/admin/v1/teams/team-a', { selfServiceTokens: true })).status).toBe(200);
    // erin is team-member of team-a by her groups; granted team-member of team-b here.
    expect(
      (await gw.admin('PUT', '/admin/v1/teams/team-b/members/erin', { role: 'team-member' })).status,
    ).toBe(200);
  }, 900_000); // installing Chromium from Debian's packages, on a machine without it
  afterAll(async () => {
    await browser?.close();
    await gw?.close();
    await provider?.stop();
    await upstream?.stop();
  });
  afterEach(() => closeCheckedSessions(opened, { adminKey: ADMIN_KEY, upstreamKey: 'upstream-secret-key' }));

  /** A browser of the test's own, signed in through the provider as `login`, on the console's `hash`. */
  const signedIn = async (login: string, hash: string): Promise<Page> => {
    const session = await openConsoleBrowser(browser, gw.url);
    opened.push(session);
    const { page } = session;
    await page.goto(`${gw.url}/console/${hash}`);
    await page.getByRole('link', { name: 'Sign in with SSO' }).click();
    await page.waitForURL((url) => url.host.startsWith(PROVIDER_HOST));
    await page.getByLabel('Username').fill(login);
    await page.getByRole('button', { name: 'Log in' }).click();
    await page.waitForURL(`${gw.url}/console/${hash}`);
    await page.locator('header .who .roles').waitFor();
    return page;
  };
  const nav = async (page: Page) => page.locator('header nav a').allTextContents();
  /** Every button and form in the page's main part, by text (buttons) and count (forms). */
  const controls = async (page: Page) => ({
    buttons: (await page.locator('main button').allTextContents()).map((text) => text.trim()),
    forms: await page.locator('main form').count(),
    summaries: await page.locator('main summary').allTextContents(),
  });
  /** A team's page once its usage, tokens and members (those the person may read) are shown. */
  const teamPageLoaded = async (page: Page, { tokens = true, members = true } = {}) => {
    await page.getByTestId('usage-by-model').waitFor();
    if (tokens) await page.locator('[data-testid=tokens] tbody tr').first().waitFor();
    if (members) await page.locator('[data-testid=members] tbody tr').first().waitFor();
  };

  it('shows an org-admin every section and every button, and grants and revokes a membership', async () => {
    const page = await signedIn('alice', '#/teams');
    expect(await nav(page)).toEqual([
      'Overview',
      'Teams',
      'Requests',
      'Models',
      'MCP',
      'Audit trail',
      'My tokens',
    ]);
    await page.getByRole('link', { name: 'team-b' }).waitFor();
    expect((await controls(page)).summaries).toContain('Create a team');

    await page.getByRole('link', { name: 'team-b' }).click();
    await teamPageLoaded(page);
    expect(await controls(page)).toEqual({
      buttons: [
        'Disable',
        'Delete team',
        'Issue token',
        'Rotate',
        'Revoke',
        'Allow member tokens',
        'Opt out of the response cache',
        'Grant',
        'Revoke',
        'Save',
        'Save ceiling',
      ],
      forms: 4,
      summaries: ['Edit MCP permissions', 'Edit models, limits and metadata', 'Edit ceiling'],
    });
    expect(await page.getByLabel('Metadata (JSON object of strings)').count()).toBe(1);

    // A subject is shown as text, never as markup.
    await page.getByLabel('Subject').fill('<i>frank</i>');
    await page.getByLabel('Role').selectOption('team-admin');
    await page.getByRole('button', { name: 'Grant' }).click();
    const row = page.locator('[data-testid=members] tr[data-member="<i>frank</i>"]');
    await row.getByText('<i>frank</i>').waitFor();
    expect(await page.locator('[data-testid=members] i').count()).toBe(0);
    expect(await row.locator('td').nth(1).textContent()).toBe('team-admin');
    await shot(page, 'team-members');
    expect((await gw.admin('GET', '/admin/v1/teams/team-b/members')).body.data).toContainEqual(
      expect.objectContaining({ subject: '<i>frank</i>', role: 'team-admin' }),
    );
    await row.getByRole('button', { name: 'Revoke' }).click();
    await row.waitFor({ state: 'detached' });
    expect(
      (await gw.admin('GET', '/admin/v1/teams/team-b/members')).body.data.map(
        (m: { subject: string }) => m.subject,
      ),
    ).toEqual(['erin']);
  });

  it('shows an org-viewer every team read-only: no button, no form', async () => {
    const page = await signedIn('vera', '#/teams');
    expect(await nav(page)).toEqual([
      'Overview',
      'Teams',
      'Requests',
      'Models',
      'MCP',
      'Audit trail',
      'My tokens',
    ]);
    await page.getByRole('link', { name: 'team-a' }).waitFor();
    await page.getByRole('link', { name: 'team-b' }).waitFor();
    expect((await controls(page)).summaries).toEqual([]);

    await page.getByRole('link', { name: 'team-b' }).click();
    await teamPageLoaded(page);
    // The tokens and members are listed, with nothing to change them by.
    await page.locator('[data-testid=members] tr[data-member=erin]').waitFor();
    await page
      .getByTestId('ceiling')
      .getByText(/^No ceiling: a team-admin may narrow/)
      .waitFor();
    expect(await controls(page)).toEqual({ buttons: [], forms: 0, summaries: [] });
  });

  it("lets an org-admin set a team's ceiling, which every reader of the team then sees", async () => {
    const page = await signedIn('alice', '#/teams/team-a');
    await teamPageLoaded(page, { members: false });
    await page.getByText('Edit ceiling').click();
    await page
      .getByRole('spinbutton', { name: `Ceiling: ${LIMIT_CATALOGUE.tokensPerDay.label}`, exact: true })
      .fill('150000');
    await page.getByRole('button', { name: 'Save ceiling' }).click();
    await page.getByRole('status').getByText('Ceiling saved.').waitFor();
    await page
      .getByTestId('ceiling')
      .locator('li[data-limit=tokensPerDay]', { hasText: '150,000' })
      .waitFor();
    const team = (await gw.admin('GET', '/admin/v1/teams/team-a')).body;
    expect(team.ceiling).toEqual({ limits: { tokensPerDay: 150_000 } });
    expect(team.limits).toEqual({ tokensPerDay: 100_000, budgetPerDay: 5 }); // within it: unchanged
    const viewer = await signedIn('vera', '#/teams/team-a');
    await viewer
      .getByTestId('ceiling')
      .locator('li[data-limit=tokensPerDay]', { hasText: '150,000' })
      .waitFor();
  });

  it('shows a team-admin their team only, where they issue a token and set limits within the ceiling', async () => {
    const page = await signedIn('dave', '#/teams');
    expect(await nav(page)).toEqual(['Overview', 'Teams', 'Requests', 'Audit trail', 'My tokens']);
    await page.getByRole('link', { name: 'team-a' }).waitFor();
    expect(await page.locator('table.teams tbody tr').count()).toBe(1);
    expect((await controls(page)).summaries).toEqual([]);

    await page.getByRole('link', { name: 'team-a' }).click();
    await teamPageLoaded(page, { members: false });
    await page.getByText('No memberships granted here.').waitFor();
    expect(await controls(page)).toEqual({
      buttons: [
        'Issue token',
        'Rotate',
        'Revoke',
        'Stop member tokens',
        'Opt out of the response cache',
        'Grant',
        'Save',
      ],
      forms: 3,
      summaries: ['Models and limits, within the ceiling'],
    });
    expect(await page.getByLabel('Metadata (JSON object of strings)').count()).toBe(0);

    await page.getByLabel('Token name').fill('daves-ci');
    await page.getByRole('button', { name: 'Issue token' }).click();
    await page.getByTestId('token-secret').waitFor();
    await page.locator('[data-testid=tokens] tr', { hasText: 'daves-ci' }).waitFor();

    // The ceiling is shown, and is each field's bound; the models' is today's list (the ceiling names none).
    await page
      .getByTestId('ceiling')
      .locator('li[data-limit=tokensPerDay]', { hasText: '150,000' })
      .waitFor();
    await page.getByText('Models and limits, within the ceiling').click();
    expect(await page.getByTestId('bound-tokensPerDay').textContent()).toBe('at most 150,000');
    expect(await page.getByTestId('bound-budgetPerDay').count()).toBe(0); // the ceiling does not bound it
    await page.getByText('within *').waitFor();
    await shot(page, 'team-within-ceiling');
    // Going past the ceiling is the server's to refuse; the page shows its message.
    const tokensPerDay = page.getByRole('spinbutton', {
      name: LIMIT_CATALOGUE.tokensPerDay.label,
      exact: true,
    });
    await tokensPerDay.fill('200000');
    await page.getByRole('button', { name: 'Save', exact: true }).click();
    await page
      .getByRole('status')
      .getByText(
        /^A team-admin may set their team's models and limits only within its ceiling: 200000 is above the team's ceiling \(150000\)/,
      )
      .waitFor();
    // Up to it, above what the team had (100,000): saved.
    await tokensPerDay.fill('150000');
    await page.getByRole('button', { name: 'Save', exact: true }).click();
    await page.getByRole('status').getByText('Saved.').waitFor();
    expect((await gw.admin('GET', '/admin/v1/teams/team-a')).body.limits.tokensPerDay).toBe(150_000);

    // Another team's page is refused by the API, and says so.
    await page.goto(`${gw.url}/console/#/teams/team-b`);
    await page.getByText(/do not allow usage:read on team "team-b"/).waitFor();
  });

  it("shows a team-member their teams' usage and spend alone, granted teams too", async () => {
    const page = await signedIn('erin', '#/teams');
    expect(await nav(page)).toEqual(['Overview', 'Teams', 'Requests', 'My tokens']);
    // team-a by her groups, team-b granted in the admin API: the session's roles carry both.
    expect(await page.locator('header .who .roles').textContent()).toBe(
      'team-member:team-a, team-member:team-b',
    );
    expect(await page.getByTestId('my-teams').getByRole('link').allTextContents()).toEqual([
      'team-a',
      'team-b',
    ]);

    await page.getByRole('link', { name: 'team-a' }).click();
    await page.getByTestId('usage-by-model').getByRole('cell', { name: 'priced' }).waitFor();
    // The budget is shown with what is spent of it (from the budget read: the team's settings are not hers).
    await page.getByTestId('limits').getByText(LIMIT_CATALOGUE.budgetPerDay.label).first().waitFor();
    expect(await controls(page)).toEqual({ buttons: [], forms: 0, summaries: [] });
    expect(await page.getByRole('heading', { name: 'Tokens' }).count()).toBe(0);
    expect(await page.getByRole('heading', { name: 'Members' }).count()).toBe(0);
    await shot(page, 'team-as-member');
  });

  /** A chat call with `token`: 200, or the SDK error's status. */
  const chatStatus = async (token: string) =>
    gw
      .openai(token)
      .chat.completions.create({
        model: 'priced',
        max_tokens: 10,
        messages: [{ role: 'user', content: 'hello' }],
      })
      .then(
        () => 200,
        (error: { status?: number }) => error.status ?? 0,
      );

  it('gives a team-member her own tokens where her team allows it: issued, shown once, calling a model, revoked', async () => {
    const page = await signedIn('erin', '#/me');
    const own = page.getByTestId('own-tokens-team-a');
    await own.getByText('No tokens yet.').waitFor();
    await page.getByTestId('admin-tokens').getByText('No personal admin tokens.').waitFor();
    // team-b does not allow it: no section and no button for it; the API refuses her there too.
    expect(await page.getByRole('heading', { name: /^Your tokens of/ }).allTextContents()).toEqual([
      'Your tokens of team-a',
    ]);
    expect(await controls(page)).toEqual({
      buttons: ['Issue admin token', 'Issue token'],
      forms: 2,
      summaries: [],
    });
    expect(await page.getByRole('heading', { name: "Anyone's personal admin tokens" }).count()).toBe(0);
    const refused = await page.evaluate(async () => {
      const response = await fetch('/admin/v1/me/teams/team-b/tokens');
      return { status: response.status, code: ((await response.json()) as any).error.code };
    });
    expect(refused).toEqual({ status: 403, code: 'permission_denied' });

    await page.getByLabel('Token name', { exact: true }).fill('erins-laptop');
    await page.getByRole('button', { name: 'Issue token' }).click();
    const secret = (await page.getByTestId('token-secret').textContent()) ?? '';
    expect(secret).toMatch(TOKEN_SECRET);
    await page.getByRole('button', { name: 'Copy' }).click();
    await page.getByRole('button', { name: 'Copied' }).waitFor();
    expect(await page.evaluate(() => (globalThis as any).navigator.clipboard.readText())).toBe(secret);
    const row = own.locator('tr', { hasText: 'erins-laptop' });
    await row.waitFor();
    expect(await chatStatus(secret)).toBe(200);
    await shot(page, 'my-tokens');
    await page.getByRole('button', { name: 'Done' }).click();
    // Shown once: gone from the page, and never in a list.
    expect(await page.getByTestId('token-secret').count()).toBe(0);
    expect(await page.content()).not.toContain(secret);

    await row.getByRole('button', { name: 'Revoke' }).click();
    await row.getByText('revoked').waitFor();
    expect(await row.getByRole('button').count()).toBe(0);
    expect(await chatStatus(secret)).toBe(401);

    // Her personal admin token: a name and an expiry, the secret shown once.
    await page.getByLabel('Admin token name').fill('erins-cli');
    await page.getByLabel('Expires in days (at most 90)').fill('7');
    await page.getByRole('button', { name: 'Issue admin token' }).click();
    expect(await page.getByTestId('token-secret').textContent()).toMatch(/^sy_admin_/);
    await page.getByTestId('admin-tokens').locator('tr', { hasText: 'erins-cli' }).waitFor();
    const listed = (await gw.admin('GET', '/admin/v1/people/erin/tokens')).body.data;
    expect(listed).toEqual([expect.objectContaining({ name: 'erins-cli', status: 'active' })]);
    const days = (Date.parse(listed[0].expiresAt) - Date.now()) / 86_400_000;
    expect(days).toBeGreaterThan(6.9);
    expect(days).toBeLessThanOrEqual(7);
  });

  it("shows a team-admin whose each token is, and lets them stop members' tokens", async () => {
    const page = await signedIn('dave', '#/teams/team-a');
    const tokens = page.getByTestId('tokens');
    await tokens.locator('tr', { hasText: 'erins-laptop' }).waitFor();
    expect(
      await tokens.locator('tr', { hasText: 'erins-laptop' }).getByTestId('token-owner').textContent(),
    ).toBe('erin@example.com');
    expect(await tokens.locator('tr', { hasText: 'daves-ci' }).getByTestId('token-owner').textContent()).toBe(
      'team',
    );
    await page.getByRole('button', { name: 'Stop member tokens' }).click();
    await page.getByRole('button', { name: 'Allow member tokens' }).waitFor();
    expect((await gw.admin('GET', '/admin/v1/teams/team-a')).body.selfServiceTokens).toBe(false);

    // erin's My tokens has no team section left, and the API refuses her.
    const erin = await signedIn('erin', '#/me');
    await erin.getByTestId('admin-tokens').locator('tr', { hasText: 'erins-cli' }).waitFor();
    expect(await erin.getByRole('heading', { name: /^Your tokens of/ }).count()).toBe(0);
    expect((await controls(erin)).buttons).toEqual(['Issue admin token', 'Revoke']);
  });

  it("lets an org-admin find anyone's personal admin tokens and revoke them", async () => {
    const page = await signedIn('alice', '#/me');
    await page.getByLabel("Person's subject").fill('erin');
    await page.getByRole('button', { name: 'Show tokens' }).click();
    const row = page.getByTestId('people-tokens').locator('tr', { hasText: 'erins-cli' });
    await row.getByRole('button', { name: 'Revoke' }).click();
    await row.getByText('revoked').waitFor();
    expect((await gw.admin('GET', '/admin/v1/people/erin/tokens')).body.data[0].status).toBe('revoked');
    // An org-viewer reads them, with no button to revoke.
    const vera = await signedIn('vera', '#/me');
    await vera.getByLabel("Person's subject").fill('erin');
    await vera.getByRole('button', { name: 'Show tokens' }).click();
    await vera.getByTestId('people-tokens').locator('tr', { hasText: 'erins-cli' }).waitFor();
    expect(await vera.getByTestId('people-tokens').getByRole('button').count()).toBe(0);
  });
});
