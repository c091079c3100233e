import { randomBytes } from 'node:crypto';
import type { Browser, Page } from 'playwright-core';
import { launchChromium } from '../support/browser';
import {
  closeCheckedSessions,
  openConsoleBrowser,
  shot,
  signInWithoutForm,
  type ConsoleBrowser,
} from '../support/console-browser';
import { eventually } from '../support/eventually';
import { OpenAIUpstream } from '../support/openai-upstream';
import { freeProviderPort, PROVIDER_HOST, TestOidcProvider } from '../support/oidc-provider';
import { oidcConfig, SSO_USERS } from '../support/sso-flow';
import { ADMIN_KEY, startTestGateway, type TestGateway } from '../support/test-gateway';

/** Markup a prompt and a model name carry: it must show as text and never become an element (nor run). */
const HOSTILE_PROMPT = '<img src=x onerror=alert(1)>';
const HOSTILE_MODEL = '<img src=x onerror=alert(2)>';
/** Requests of team-b sent before the others: with them the log has more than one page (50). */
const FILLER = 50;
/** The trace the request with two attempts belongs to (its traceparent). */
const TRACE_ID = randomBytes(16).toString('hex');
/** A prompt past what the log keeps of a side (256 K characters of its JSON): kept as its beginning, as text. */
const BIG_PROMPT = 'big '.repeat(70_000);

/**
 * The console's Requests page in Debian's Chromium, against the whole gateway and its request log (Redis store):
 * the list newest first, filtered by team and status, paged; one request with its two attempts (a deployment that
 * answers 503, then one that answers) as a timeline, its usage and cost, and its content redacted and shown as
 * text; a team-member signed in through SSO sees their team's requests only.
 */
describe('the console: requests', () => {
  jest.setTimeout(120_000);
  let upstream: OpenAIUpstream;
  let provider: TestOidcProvider;
  let gw: TestGateway;
  let browser: Browser;
  const opened: ConsoleBrowser[] = [];
  /** The ids of the requests the test sent, by what they were. */
  const sent: Record<string, string> = {};
  /** Every entry, newest first, as the admin API lists them. */
  let all: Array<{ id: string; team: string; model: string }>;

  beforeAll(async () => {
    browser = await launchChromium();
    upstream = await new OpenAIUpstream().start();
    const port = await freeProviderPort();
    gw = await startTestGateway({
      upstreamUrl: upstream.url,
      config: {
        auth: { oidc: oidcConfig(`http://${PROVIDER_HOST}:${port}`) },
        models: {
          'retry-then-echo': {
            routing: 'priority',
            deployments: [
              { backend: 'standin', upstreamModel: 'status-503' },
              { backend: 'standin', upstreamModel: 'echo' },
            ],
          },
          // $2 and $8 a million tokens: "one two three" costs $0.000038 (3 tokens in, 4 out).
          priced: { backend: 'standin', upstreamModel: 'echo', price: { input: 2, output: 8 } },
        },
        routing: { retries: { attempts: 1, backoffMs: 1 } },
      },
    });
    provider = await new TestOidcProvider(SSO_USERS).start(`${gw.url}/console/api/sso/callback`, port);
    // team-a keeps content (erin is its team-member through her groups); team-b keeps metadata only.
    expect(
      (await gw.admin('POST', '/admin/v1/teams', { id: 'team-a', logging: { content: 'full' } })).status,
    ).toBe(201);
    const a = gw.openai((await gw.teamToken('team-a')).token);
    const b = gw.openai((await gw.teamToken('team-b')).token);
    const chat = (client: typeof a, model: string, content: string) =>
      client.chat.completions.create({ model, messages: [{ role: 'user', content }] });
    for (let i = 0; i < FILLER; i += 10)
      await Promise.all(Array.from({ length: 10 }, (_, j) => chat(b, 'echo', `filler ${i + j}`)));
    await chat(b, 'echo', 'from the other team');
    await a.chat.completions.create(
      { model: 'retry-then-echo', messages: [{ role: 'user', content: 'hello from the timeline' }] },
      { headers: { traceparent: `00-${TRACE_ID}-${randomBytes(8).toString('hex')}-01` } },
    );
    await chat(a, 'echo', 'write to jane.doe@example.com today');
    await chat(a, 'echo', HOSTILE_PROMPT);
    await expect(chat(a, 'status-400', 'refused')).rejects.toMatchObject({ status: 400 });
    await expect(chat(a, HOSTILE_MODEL, 'no such model')).rejects.toMatchObject({ status: 404 });
    await chat(a, 'echo', BIG_PROMPT);
    await chat(a, 'priced', 'one two three');
    all = await eventually(async () => {
      const list = await gw.admin('GET', '/admin/v1/requests?limit=1000');
      expect(list.body.data).toHaveLength(FILLER + 8);
      return list.body.data;
    }, 15_000);
    const newestOfTeamA = all.filter((entry) => entry.team === 'team-a').map((entry) => entry.id);
    [sent.priced, sent.big, sent.hostileModel, sent.refused, sent.hostile, sent.email, sent.retried] =
      newestOfTeamA;
    sent.teamB = all.find((entry) => entry.team === 'team-b')!.id;
  }, 900_000); // installing Chromium from Debian's packages, on a machine without it
  afterAll(async () => {
    await browser?.close();
    await gw?.close();
    await provider?.stop();
    await upstream?.stop();
  });
  afterEach(() =>
    closeCheckedSessions(
      opened,
      { adminKey: ADMIN_KEY, upstreamKey: 'upstream-secret-key' },
      async ({ page }) => {
        // No element from the markup the requests carried, anywhere the test went (list and detail).
        expect(await page.locator('img').count()).toBe(0);
      },
    ),
  );

  /** A browser signed in with the admin key (org-admin), on the console's `hash`. */
  const asAdmin = async (hash: string): Promise<Page> => {
    const session = await openConsoleBrowser(browser, gw.url);
    opened.push(session);
    await signInWithoutForm(session, gw.url, ADMIN_KEY, 'alice');
    await session.page.goto(`${gw.url}/console/${hash}`);
    return session.page;
  };
  const rows = (page: Page) => page.locator('[data-testid=requests] tbody tr[data-request]');
  const ids = (page: Page) =>
    rows(page).evaluateAll((trs) => trs.map((tr) => (tr as any).dataset.request as string));
  /** The text of one column of the table's rows (0: time, 1: team, 4: model, 5: status, 9: cost). */
  const column = (page: Page, i: number) =>
    rows(page).evaluateAll((trs, i) => trs.map((tr) => (tr as any).cells[i].textContent as string), i);
  /** Waits for the table to show `count` rows (the page's answer replaces the rows at once). */
  const showing = async (page: Page, count: number) =>
    eventually(async () => expect(await rows(page).count()).toBe(count), 10_000);

  it('lists the requests newest first, narrows them by team and status, and pages with Older', async () => {
    const page = await asAdmin('#/requests');
    await showing(page, 50); // the page has rendered (allTextContents does not wait for the nav to be there)
    expect(await page.locator('header nav a').allTextContents()).toContain('Requests');
    expect(await ids(page)).toEqual(all.slice(0, 50).map((entry) => entry.id));
    expect((await column(page, 4)).slice(0, 8)).toEqual([
      'priced',
      'echo',
      `${HOSTILE_MODEL} → none`,
      'status-400 → none',
      'echo',
      'echo',
      'retry-then-echo',
      'echo',
    ]);
    expect((await column(page, 1)).slice(0, 8)).toEqual([...Array(7).fill('team-a'), 'team-b']);
    expect((await column(page, 5)).slice(0, 5)).toEqual([
      '200',
      '200',
      '404 model_not_found',
      '400 context_length_exceeded',
      '200',
    ]);
    expect((await column(page, 9))[0]).toBe('$0.000038');
    await shot(page, 'requests');

    // Older: the rest; Newer: back to the first page.
    await page.getByRole('button', { name: 'Older' }).click();
    await showing(page, all.length - 50);
    expect(await ids(page)).toEqual(all.slice(50).map((entry) => entry.id));
    expect(await page.getByRole('button', { name: 'Older' }).isDisabled()).toBe(true);
    await page.getByRole('button', { name: 'Newer' }).click();
    await showing(page, 50);
    expect((await ids(page))[0]).toBe(all[0].id);

    // By team, then by team and status.
    const options = await page.getByLabel('Team').locator('option').allTextContents();
    expect(options).toEqual(['All teams', 'team-a', 'team-b']);
    await page.getByLabel('Team').selectOption('team-a');
    await page.getByRole('button', { name: 'Filter' }).click();
    await showing(page, 7);
    expect(new Set(await column(page, 1))).toEqual(new Set(['team-a']));
    expect(await page.getByRole('button', { name: 'Older' }).isDisabled()).toBe(true);
    await page.getByLabel('Status').fill('400');
    await page.getByRole('button', { name: 'Filter' }).click();
    await showing(page, 1);
    expect(await ids(page)).toEqual([sent.refused]);
    // Every failure, whatever its status: the refused request (400) and the unknown model (404).
    await page.getByLabel('Status').fill('');
    await page.getByLabel('Outcome').selectOption('error');
    await page.getByRole('button', { name: 'Filter' }).click();
    await showing(page, 2);
    expect(await ids(page)).toEqual([sent.hostileModel, sent.refused]);
    // The form keeps what it filters by; Clear shows everything again.
    expect(await page.getByLabel('Team').inputValue()).toBe('team-a');
    await page.getByRole('button', { name: 'Clear' }).click();
    await showing(page, 50);
  });

  it('shows one request: its attempts as a timeline, usage and cost, and its content redacted, as text', async () => {
    const page = await asAdmin('#/requests');
    await showing(page, 50);
    await page.locator(`tr[data-request="${sent.retried}"] td a`).click();
    await page.waitForURL(`${gw.url}/console/#/requests/${sent.retried}`);

    // Two attempts, in order: the 503 (with its error), then the deployment that answered; each bar as long as
    // its attempt took, the second starting where the first ended.
    const attempts = page.locator('[data-testid=attempts] > li');
    await attempts.nth(1).waitFor();
    expect(await attempts.count()).toBe(2);
    const [failed, answered] = await attempts.allTextContents();
    expect(failed).toMatch(/standin\/status-503.*upstream_unavailable.*HTTP 503/);
    expect(failed).toContain('Upstream says 503');
    expect(answered).toMatch(/standin\/echo.*ok.*HTTP 200/);
    const bars = await page
      .locator('.timeline-bar')
      .evaluateAll((els) => els.map((el) => (el as any).getBoundingClientRect()));
    expect(bars).toHaveLength(2);
    for (const bar of bars) expect(bar.width).toBeGreaterThan(0);
    expect(bars[1].left).toBeGreaterThanOrEqual(bars[0].right - 1);
    const entry = (await gw.admin('GET', `/admin/v1/requests/${sent.retried}`)).body;
    const [first, second] = entry.attempts.map((a: { durationMs: number }) => a.durationMs);
    expect(bars[0].width / bars[1].width).toBeCloseTo(first / second, 0);

    const fields = await page.getByTestId('request-fields').textContent();
    expect(fields).toContain('team-a');
    expect(fields).toContain(`test (${entry.token.id})`);
    expect(fields).toContain('none (a team token)');
    expect(fields).toContain('chat.completions');
    expect(fields).toContain('127.0.0.1');
    expect(fields).toContain(TRACE_ID);
    expect(await page.getByTestId('request-usage').textContent()).toMatch(/Tokens in4Tokens out5/);
    const content = page.getByTestId('request-content');
    expect(await content.locator('[data-side=Request] .message pre').allTextContents()).toEqual([
      'hello from the timeline',
    ]);
    expect(await content.locator('[data-side=Answer] .message pre').allTextContents()).toEqual([
      'echo: hello from the timeline',
    ]);
    await shot(page, 'request');

    // Its trace: the list filtered to the requests of that trace.
    await page.getByRole('button', { name: 'Requests in this trace' }).click();
    await page.waitForURL(`${gw.url}/console/#/requests`);
    await showing(page, 1);
    expect(await ids(page)).toEqual([sent.retried]);
    expect(await page.getByLabel('Trace id').inputValue()).toBe(TRACE_ID);

    // The email is redacted before it is kept: the page shows the marker, never the address.
    await page.goto(`${gw.url}/console/#/requests/${sent.email}`);
    await content.getByText('write to [email] today').first().waitFor();
    expect(await page.locator('main').textContent()).not.toContain('jane.doe@example.com');

    // Markup sent as a prompt is text: the request and the echo show it, and no element is made of it.
    await page.goto(`${gw.url}/console/#/requests/${sent.hostile}`);
    await content.locator('[data-side=Answer] .message pre').getByText(`echo: ${HOSTILE_PROMPT}`).waitFor();
    expect(await content.locator('[data-side=Request] .message pre').allTextContents()).toEqual([
      HOSTILE_PROMPT,
    ]);

    // A side too big to keep whole says so, and shows its beginning as text.
    await page.goto(`${gw.url}/console/#/requests/${sent.big}`);
    const big = await content.locator('[data-side=Request] [role=note]').textContent();
    expect(big).toMatch(/^Too big to keep whole: its first 262,144 of 280,\d{3} characters/);
    expect(await content.locator('[data-side=Request] pre').textContent()).toMatch(/^\{"model":"echo"/);
    expect(await content.locator('[data-side=Answer] [role=note]').count()).toBe(1);

    // A priced request's cost; a team that keeps no content says so.
    await page.goto(`${gw.url}/console/#/requests/${sent.priced}`);
    await page.getByTestId('request-usage').getByText('$0.000038').waitFor();
    await page.goto(`${gw.url}/console/#/requests/${sent.teamB}`);
    await page.getByText('Not kept: this team').waitFor();
    expect(await page.getByTestId('request-content').count()).toBe(0);
  });

  it("changes what the log keeps of a team from the team's page (keep content, or the organisation's default)", async () => {
    const page = await asAdmin('#/teams/team-b');
    const setting = page.getByTestId('team-logging');
    await setting.getByText("follows the organisation's setting").waitFor();
    await setting.getByLabel('Request log content').selectOption('full');
    await setting.getByText('keeps what this team sends').waitFor();
    expect((await gw.admin('GET', '/admin/v1/teams/team-b')).body.logging).toEqual({ content: 'full' });
    await setting.getByLabel('Request log content').selectOption('default');
    await setting.getByText("follows the organisation's setting").waitFor();
    expect((await gw.admin('GET', '/admin/v1/teams/team-b')).body.logging).toEqual({ content: null });
  });

  it("opts a team out of the response cache from the team's page, and back in", async () => {
    const page = await asAdmin('#/teams/team-b');
    const setting = page.getByTestId('team-response-cache');
    await setting.getByText('answer repeated requests of this team').waitFor();
    await setting.getByRole('button', { name: 'Opt out of the response cache' }).click();
    await setting.getByText('never uses the response cache').waitFor();
    expect((await gw.admin('GET', '/admin/v1/teams/team-b')).body.responseCache).toBe(false);
    await setting.getByRole('button', { name: 'Use the response cache' }).click();
    await setting.getByText('answer repeated requests of this team').waitFor();
    expect((await gw.admin('GET', '/admin/v1/teams/team-b')).body.responseCache).toBe(true);
  });

  it("shows a team-member their team's requests only", async () => {
    const session = await openConsoleBrowser(browser, gw.url);
    opened.push(session);
    const { page } = session;
    await page.goto(`${gw.url}/console/#/requests`);
    await page.getByRole('link', { name: 'Sign in with SSO' }).click();
    await page.waitForURL((url) => url.host.startsWith(PROVIDER_HOST));
    await page.getByLabel('Username').fill('erin'); // team-member:team-a, by her groups
    await page.getByRole('button', { name: 'Log in' }).click();
    await page.waitForURL(`${gw.url}/console/#/requests`);
    // The navigation is drawn once the person's roles are read: wait for it, then read it whole.
    await page.locator('header nav').getByRole('link', { name: 'My tokens' }).waitFor();
    expect(await page.locator('header nav a').allTextContents()).toEqual([
      'Overview',
      'Teams',
      'Requests',
      'My tokens',
    ]);
    await showing(page, 7);
    expect(new Set(await column(page, 1))).toEqual(new Set(['team-a']));
    expect(await page.getByLabel('Team').locator('option').allTextContents()).toEqual([
      'All my teams',
      'team-a',
    ]);
    // Another team's request by its address: the API answers as for one that does not exist.
    await page.goto(`${gw.url}/console/#/requests/${sent.teamB}`);
    await page.locator('main .error').getByText('No request').waitFor();
    // Chromium logs the 404 as an error; it is the answer asked for.
    expect(session.errors).toEqual([expect.stringContaining('status of 404')]);
    session.errors.length = 0;
  });
});
