import { randomBytes } from 'node:crypto';
import { mkdirSync, rmSync } from 'node:fs';
import type { Browser } from 'playwright-core';
import { AccessAdminService } from '../../src/admin/access-admin.service';
import { LIMIT_NAMES } from '../../src/core/limit-catalogue';
import { launchChromium } from '../support/browser';
import {
  CONSOLE_SHOTS,
  expectNoSecretIn,
  issuesASecret,
  openConsoleBrowser,
  shot,
  signInWithoutForm,
  TOKEN_SECRET,
  type ConsoleBrowser,
} from '../support/console-browser';
import { eventually } from '../support/eventually';
import { OpenAIUpstream } from '../support/openai-upstream';
import { ADMIN_KEY, startTestGateway, type TestGateway } from '../support/test-gateway';
import { waitForUsageSummary } from '../support/usage';

/** The test gateway's upstream key (test-gateway.ts): it must never reach the browser. */
const UPSTREAM_KEY = 'upstream-secret-key';

/** What the console's gateways serve besides the test models. */
const CONSOLE_CONFIG = {
  // `priced` costs a few millionths of a dollar a request: how the console writes money that small.
  // `nowhere` cannot be reached: the models page says its deployment is down and its model hidden, and why.
  backends: { nowhere: { type: 'openai', baseUrl: 'http://127.0.0.1:1', apiKey: 'x' } },
  models: {
    priced: { backend: 'standin', upstreamModel: 'echo', price: { input: 2, output: 8 } },
    unreachable: { backend: 'nowhere', upstreamModel: 'x' },
  },
};

/**
 * What one `priced` request of "one two three" costs: the OpenAI stand-in counts 3 prompt tokens and 4 completion
 * tokens ("echo:" and the three words), at $2 and $8 a million.
 */
const PRICED_COST = '$0.000038';

/** A name no other test uses (teams, tokens and signed-in names are per test). */
const unique = (base: string) => `${base}-${randomBytes(2).toString('hex')}`;

/**
 * The admin console in a real browser (Debian's Chromium through playwright-core), against the whole gateway on
 * a port: sign-in, a team created, a token issued and copied, used for a real chat request, seen in the team's
 * usage, revoked, and sign-out; a wrong key and a change without the CSRF token refused. Screenshots of every
 * page go to test-results/console/.
 *
 * Each test opens its own browser context (its own session: `signedIn` signs in without the form, fast) and makes
 * its own teams and tokens under names no other test uses, so any test passes alone and in any order. Tests that
 * read organisation-wide figures (the overview's counts and spend, the team list's first pages, the audit trail
 * unfiltered) run against a gateway of their own (`ownGateway`, a fresh Redis key prefix), where those figures are
 * exactly what the test did. After each test, every page it opened is checked for script errors, CSP violations
 * and secrets in what it read.
 */
describe('the admin console', () => {
  jest.setTimeout(120_000);
  let upstream: OpenAIUpstream;
  let gw: TestGateway;
  let browser: Browser;
  /** The browser contexts and gateways the running test opened; closed and checked after it. */
  const opened: ConsoleBrowser[] = [];
  const ownGateways: TestGateway[] = [];

  beforeAll(async () => {
    rmSync(CONSOLE_SHOTS, { recursive: true, force: true }); // only this run's screenshots
    mkdirSync(CONSOLE_SHOTS, { recursive: true });
    browser = await launchChromium();
    upstream = await new OpenAIUpstream().start();
    gw = await startTestGateway({ upstreamUrl: upstream.url, config: CONSOLE_CONFIG });
  }, 900_000); // installing Chromium from Debian's packages, on a machine without it
  afterAll(async () => {
    await browser?.close();
    await gw?.close();
    await upstream?.stop();
  });
  afterEach(async () => {
    const sessions = opened.splice(0);
    const reads = await Promise.all(sessions.map((session) => Promise.all(session.reads)));
    for (const session of sessions) await session.context.close();
    for (const own of ownGateways.splice(0)) await own.close();
    // Every page any test opened: no script error, no Content-Security-Policy violation, no secret read.
    for (const [i, session] of sessions.entries()) {
      expect(session.errors).toEqual([]);
      expectNoSecretIn(reads[i], { adminKey: ADMIN_KEY, upstreamKey: UPSTREAM_KEY });
    }
  });

  /** A browser of the test's own, signed out, on the shared gateway or on `on`. */
  const openConsole = async (on: TestGateway = gw) => {
    const session = await openConsoleBrowser(browser, on.url);
    opened.push(session);
    return session;
  };
  /** A browser of the test's own, signed in as `name` (the audit trail's `console:<name>`). */
  const signedIn = async (name: string, on: TestGateway = gw) => {
    const session = await openConsole(on);
    await signInWithoutForm(session, on.url, ADMIN_KEY, name);
    return session;
  };
  /** A gateway of the test's own (same config and `extra`, a fresh Redis key prefix), closed after the test. */
  const ownGateway = async (extra: Record<string, unknown> = {}) => {
    const own = await startTestGateway({
      upstreamUrl: upstream.url,
      config: { ...CONSOLE_CONFIG, ...extra },
    });
    ownGateways.push(own);
    return own;
  };
  const chat = (on: TestGateway, token: string, model: string, content: string) =>
    on.openai(token).chat.completions.create({ model, messages: [{ role: 'user', content }] });
  /** Signs in through the page's own form, as a user does. */
  const signInWithForm = async ({ page }: ConsoleBrowser, name: string, adminKey = ADMIN_KEY) => {
    await page.getByLabel('Your name (for the audit trail)').fill(name);
    await page.getByLabel('Admin key').fill(adminKey);
    await page.getByRole('button', { name: 'Sign in' }).click();
  };

  /**
   * Opens every page of the console as a user does, on the shared gateway: the sign-in form, the overview, the
   * team list, a team with usage (a token issued and rotated there), the models and the audit trail.
   */
  const visitEveryPage = async (session: ConsoleBrowser) => {
    const { page } = session;
    const team = unique('visited');
    const { token } = await gw.teamToken(team);
    await chat(gw, token, 'echo', 'one two three');
    await waitForUsageSummary(gw, `team=${team}`, 1);
    await page.goto(`${gw.url}/console/`);
    await signInWithForm(session, unique('visitor'));
    await page.getByRole('heading', { name: 'Overview' }).waitFor();
    await page.locator('[data-chart="Tokens per day"] canvas').waitFor();
    await page.getByRole('link', { name: 'Teams' }).click();
    await page.getByLabel('Search teams').fill(team);
    await page.getByRole('link', { name: team }).click();
    await page.getByTestId('usage-by-model').getByRole('row', { name: /echo/ }).waitFor();
    await page.getByLabel('Token name').fill('visit');
    await page.getByRole('button', { name: 'Issue token' }).click();
    await page.getByRole('button', { name: 'Done' }).click();
    await page.getByRole('button', { name: 'Rotate' }).first().click();
    await page
      .getByRole('dialog', { name: /Rotate token/ })
      .getByRole('button', { name: 'Rotate' })
      .click();
    await page.getByRole('button', { name: 'Done' }).click();
    await page.getByRole('link', { name: 'Models' }).click();
    await page.getByRole('cell', { name: 'echo', exact: true }).first().waitFor();
    await page.getByRole('link', { name: 'Audit trail' }).click();
    await page
      .getByTestId('audit')
      .getByRole('row', { name: /token\.rotate/ })
      .first()
      .waitFor();
  };

  it('answers /console, the address docs/console.md and the quickstart print, by sending the browser to /console/', async () => {
    const bare = await fetch(`${gw.url}/console?from=readme`, { redirect: 'manual' });
    expect(bare.status).toBe(301);
    expect(bare.headers.get('location')).toBe('/console/?from=readme');
    expect(bare.headers.get('content-security-policy')).toContain("default-src 'none'");
    expect((await fetch(`${gw.url}/console`, { method: 'HEAD', redirect: 'manual' })).status).toBe(301);
    expect((await fetch(`${gw.url}/console`, { method: 'POST', redirect: 'manual' })).status).toBe(404); // only GET and HEAD are the page's
  });

  it('refuses a wrong admin key, and is served under a strict Content-Security-Policy', async () => {
    const session = await openConsole();
    const { page } = session;
    const response = await page.goto(`${gw.url}/console`); // as docs/console.md prints it
    expect(new URL(page.url()).pathname).toBe('/console/');
    expect(response!.status()).toBe(200);
    expect(response!.headers()['content-security-policy']).toContain("script-src 'self'");
    expect(response!.headers()['content-security-policy']).not.toContain('unsafe-inline');
    await signInWithForm(session, 'alice', 'not-the-key');
    await page.getByRole('alert').filter({ hasText: 'The admin key is not valid.' }).waitFor();
    await shot(page, 'sign-in');
  });

  it('signs in to a session cookie, never keeping the key in the browser', async () => {
    const session = await openConsole();
    const { page, context } = session;
    await page.goto(`${gw.url}/console/`);
    await signInWithForm(session, 'alice');
    await page.getByRole('heading', { name: 'Overview' }).waitFor();
    const [cookie] = await context.cookies(gw.url);
    expect(cookie).toMatchObject({ name: 'sy_console', httpOnly: true, sameSite: 'Strict' });
    expect(Math.abs(cookie.expires * 1000 - (Date.now() + 8 * 3600_000))).toBeLessThan(60_000); // console.sessionTtlSeconds
    expect(cookie.value).not.toContain(ADMIN_KEY);
    // (Browser globals through globalThis: this file is type-checked without the DOM library.)
    const stored = await page.evaluate(() => {
      const browser = globalThis as any;
      return (
        JSON.stringify({ ...browser.localStorage }) +
        JSON.stringify({ ...browser.sessionStorage }) +
        browser.document.cookie
      );
    });
    expect(stored).not.toContain(ADMIN_KEY);
    expect(stored).not.toContain(cookie.value); // HttpOnly: the page's scripts cannot read it
  });

  it('creates a team, issues and copies a token that works, shows its usage, and revokes it', async () => {
    const { page } = await signedIn('alice');
    const team = unique('console-team');
    await page.goto(`${gw.url}/console/#/teams`);
    await page.getByText('Create a team').click();
    await page.getByLabel('Id').fill(team);
    await page.getByLabel('Tokens / day').fill('100000');
    await page.getByRole('button', { name: 'Create team' }).click();
    await page
      .getByRole('status')
      .filter({ hasText: `Team ${team} created.` })
      .waitFor();
    // The list of this test's team alone, whatever other tests made on the shared gateway.
    await page.getByLabel('Search teams').fill(team);
    await eventually(async () => expect(await page.locator('table.teams tbody tr').count()).toBe(1), 5000);
    await shot(page, 'teams');
    await page.getByRole('link', { name: team }).click();
    await page.getByRole('heading', { name: new RegExp(team) }).waitFor();

    await page.getByLabel('Token name').fill('ci');
    await page.getByRole('button', { name: 'Issue token' }).click();
    const secret = (await page.getByTestId('token-secret').textContent())!;
    expect(secret).toMatch(/^sy-[0-9a-f]{16}-/);
    await page.getByRole('button', { name: 'Copy' }).click();
    await page.getByRole('button', { name: 'Copied' }).waitFor();
    expect(await page.evaluate(() => (globalThis as any).navigator.clipboard.readText())).toBe(secret);

    // The copied token answers a real chat request (the openai SDK), and the team's page shows it.
    const answer = await chat(gw, secret, 'echo', 'one two three');
    expect(answer.usage!.total_tokens).toBe(7);
    await waitForUsageSummary(gw, `team=${team}`, 1);
    await page.reload();
    const row = page.getByTestId('usage-by-model').getByRole('row', { name: /echo/ });
    await row.waitFor();
    expect((await row.textContent())!.replace(/\s+/g, ' ')).toContain('echo17');
    // The chart drew the day's 7 tokens: uPlot's legend shows the value under the cursor (today, at the right end).
    const plot = page.locator('[data-chart="Tokens per day"] .u-over');
    await plot.hover({ position: { x: (await plot.boundingBox())!.width - 1, y: 20 } });
    await expect(
      page.locator('[data-chart="Tokens per day"] .u-legend .u-value').nth(1).textContent(),
    ).resolves.toBe('7');
    await page.getByText('7 of 100,000 tokens today').waitFor(); // tokensPerDay, how full
    await shot(page, 'team');

    // Rotate: the page asks for the grace period in its own dialog (never prompt()); a new secret shown once, and the
    // old one keeps working for the grace period asked.
    await page.getByRole('button', { name: 'Rotate' }).click();
    const dialog = page.getByRole('dialog', { name: /Rotate token/ });
    await expect(dialog.getByLabel('Grace period (seconds)').inputValue()).resolves.toBe('3600');
    await shot(page, 'rotate-dialog');
    await dialog.getByRole('button', { name: 'Cancel' }).click();
    await dialog.waitFor({ state: 'detached' });
    await page.getByRole('button', { name: 'Rotate' }).click();
    await dialog.getByLabel('Grace period (seconds)').fill('600');
    const [rotation] = await Promise.all([
      page.waitForResponse((r) => r.request().method() === 'POST' && r.url().endsWith('/rotate')),
      dialog.getByRole('button', { name: 'Rotate' }).click(),
    ]);
    await page.getByRole('button', { name: 'Copy' }).waitFor();
    await dialog.waitFor({ state: 'detached' });
    const rotated = (await page.getByTestId('token-secret').textContent())!;
    // The secret the rotation issued (a page still showing the old one fails here), for the same token id.
    expect(rotated).toBe(((await rotation.json()) as { token: string }).token);
    expect(rotated).toMatch(new RegExp(`^${secret.slice(0, 19)}-[A-Za-z0-9_-]{43}$`));
    for (const key of [rotated, secret]) await chat(gw, key, 'echo', 'x');
    const rotations = await gw.admin(
      'GET',
      `/admin/v1/audit?${new URLSearchParams({ action: 'token.rotate', target: `team/${team}` })}`,
    );
    expect(rotations.body.data.map((entry: { details: unknown }) => entry.details)).toEqual([
      { graceSeconds: 600 },
    ]);
    await page.getByRole('button', { name: 'Done' }).click();

    await page.getByRole('button', { name: 'Revoke' }).click();
    await page.getByTestId('tokens').getByText('revoked').waitFor();
    for (const key of [rotated, secret]) {
      const refused = await chat(gw, key, 'echo', 'x').then(
        () => 200,
        (e: { status: number }) => e.status,
      );
      expect(refused).toBe(401);
    }
  });

  it('lists models with their health and the audit trail, every change made by the signed-in name', async () => {
    // A gateway of its own: the audit trail unfiltered and the overview's count are this test's alone.
    const own = await ownGateway();
    const actor = unique('alice');
    const { page } = await signedIn(actor, own);
    const team = unique('audited');
    const { token } = await own.teamToken(team);
    for (let i = 0; i < 3; i++) await chat(own, token, 'echo', 'one two three');
    await waitForUsageSummary(own, `team=${team}`, 3);
    await page.goto(`${own.url}/console/#/teams/${team}`);
    await page.getByRole('button', { name: 'Revoke' }).click();
    await page.getByTestId('tokens').getByText('revoked').waitFor();

    await page.getByRole('link', { name: 'Models' }).click();
    await page.getByRole('cell', { name: 'echo', exact: true }).first().waitFor();
    expect((await page.getByTestId('status-echo:standin/echo').textContent())!.trim()).toBe('up');
    const down = (await page.getByTestId('status-unreachable:nowhere/x').textContent())!;
    expect(down).toMatch(/^down .*unreachable/i);
    expect(down).toContain('unreachable is not listed in /v1/models: no deployment of it is up');
    expect(
      await page.getByTestId('status-unreachable:nowhere/x').locator('div').getAttribute('title'),
    ).toMatch(/nowhere\/x: unreachable/);
    await shot(page, 'models');
    await page.getByRole('link', { name: 'Audit trail' }).click();
    await page.getByLabel('Action').fill('token.revoke');
    await page.getByRole('button', { name: 'Filter' }).click();
    const entry = page.getByTestId('audit').getByRole('row', { name: /token\.revoke/ });
    await entry.first().waitFor();
    expect(await entry.count()).toBe(1);
    expect(await entry.textContent()).toContain(`console:${actor}`);
    await page.getByLabel('Action').fill('');
    await page.getByRole('button', { name: 'Filter' }).click();
    await page
      .getByTestId('audit')
      .getByRole('row', { name: /team\.create/ })
      .first()
      .waitFor();
    await shot(page, 'audit');
    await page.getByRole('link', { name: 'Overview' }).click();
    await expect(page.getByTestId('requests-today').locator('strong').textContent()).resolves.toBe('3');
    await page.locator('[data-chart="Tokens per day"] canvas').waitFor();
    await shot(page, 'overview');
  });

  it('refuses a change without the CSRF token, from the page and from outside it', async () => {
    const { page, context } = await signedIn('alice');
    await page.goto(`${gw.url}/console/`);
    await page.getByRole('heading', { name: 'Overview' }).waitFor();
    const forged = unique('forged');
    const fromPage = await page.evaluate(async (id) => {
      const response = await fetch('/admin/v1/teams', {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ id }),
      });
      return { status: response.status, body: await response.json() };
    }, forged);
    expect(fromPage).toMatchObject({ status: 403, body: { error: { code: 'csrf_token_invalid' } } });
    const [cookie] = await context.cookies(gw.url);
    const outside = await fetch(`${gw.url}/admin/v1/teams`, {
      method: 'POST',
      headers: { cookie: `sy_console=${cookie.value}`, 'content-type': 'application/json' },
      body: JSON.stringify({ id: forged }),
    });
    expect(outside.status).toBe(403);
    expect((await gw.admin('GET', `/admin/v1/teams/${forged}`)).status).toBe(404);
  });

  it('shows team metadata as text, whatever it holds', async () => {
    const { page } = await signedIn('alice');
    const team = unique('hostile');
    const hostile = '<img src=x onerror="window.__owned=1"><script>window.__owned=2</script>';
    expect(
      (await gw.admin('POST', '/admin/v1/teams', { id: team, metadata: { note: hostile } })).status,
    ).toBe(201);
    await page.goto(`${gw.url}/console#/teams/${team}`);
    await page.getByTestId('metadata').getByText(hostile, { exact: true }).waitFor();
    expect(await page.evaluate(() => (globalThis as any).__owned)).toBeUndefined();
    expect(await page.locator('main img').count()).toBe(0);
  });

  it('lists and filters 1,000 teams with 10,000 tokens a page at a time, without a stall', async () => {
    // A gateway of its own: the list's pages are these teams alone, and no other test's page reads 1,000 teams.
    // The overview reads all 1,000 teams' counters at once: on a loaded 2-core machine Redis took longer than the
    // default 1 s command timeout to answer (503 store_unavailable, the overview never drawn). The overview's
    // time is bounded below (20 s); the command timeout is not what this test is about.
    const own = await ownGateway({ redis: { commandTimeoutMs: 20_000 } });
    // Seeded through the admin service itself (what the API calls), 1,000 teams of 10 tokens.
    const admin = own.gateway.app.get(AccessAdminService);
    const by = { actor: 'test-seed' };
    const ids = Array.from({ length: 1000 }, (_, i) => `org-${String(i).padStart(4, '0')}`);
    for (let i = 0; i < ids.length; i += 50) {
      await Promise.all(
        ids.slice(i, i + 50).map(async (id) => {
          await admin.createTeam(by, id, { models: ['*'] });
          for (let t = 0; t < 10; t++) await admin.createToken(by, id, { name: `t${t}` });
        }),
      );
    }
    const { page } = await signedIn('alice', own);
    const teamListCalls: string[] = [];
    page.on(
      'request',
      (request) => request.url().includes('/admin/v1/teams?') && teamListCalls.push(request.url()),
    );
    const timed = async (action: () => Promise<unknown>) => {
      const started = Date.now();
      await action();
      return Date.now() - started;
    };
    const firstPage = await timed(async () => {
      await page.goto(`${own.url}/console#/teams`);
      await page.getByRole('link', { name: 'org-0000' }).waitFor();
    });
    expect(await page.locator('table.teams tbody tr').count()).toBe(50);
    await shot(page, 'teams-1000');
    const search = await timed(async () => {
      await page.getByLabel('Search teams').fill('org-0999');
      await page.getByRole('link', { name: 'org-0999' }).waitFor();
      await eventually(async () => expect(await page.locator('table.teams tbody tr').count()).toBe(1), 5000);
    });
    await page.getByLabel('Search teams').fill('');
    await page.getByRole('link', { name: 'org-0000' }).waitFor();
    const nextPage = await timed(async () => {
      await page.getByRole('button', { name: 'Next' }).click();
      await page.getByRole('link', { name: 'org-0050' }).waitFor();
    });
    const team = await timed(async () => {
      await page.getByRole('link', { name: 'org-0050' }).click();
      await eventually(
        async () => expect(await page.getByTestId('tokens').locator('tbody tr').count()).toBe(10),
        10_000,
      );
    });
    const overview = await timed(async () => {
      await page.getByRole('link', { name: 'Overview' }).click();
      await page.getByTestId('requests-month').waitFor();
    });
    console.log(
      `console with 1000 teams / 10000 tokens (ms): first page ${firstPage}, search ${search}, next page ${nextPage}, a team ${team}, overview ${overview}`,
    );
    expect(teamListCalls.every((url) => url.includes('limit=50'))).toBe(true); // paged, never the whole list
    // Generous bounds for a loaded 2-core machine; a stall (reading every team's record per page) is seconds. The
    // overview reads every team's counters (docs/console.md): reported, bounded only against a hang.
    for (const ms of [firstPage, search, nextPage, team]) expect(ms).toBeLessThan(3000);
    expect(overview).toBeLessThan(20_000);
  });

  it('reads no secret and no hash from the admin API, except a token secret in the response that issued it', async () => {
    // Every test's pages are checked the same way after it (afterEach); this one reads every kind of answer itself.
    const session = await openConsole();
    await visitEveryPage(session);
    const reads = await Promise.all(session.reads);
    const kinds = [
      /^POST \/console\/api\/session$/,
      /^GET \/console\/api\/session$/,
      /^GET \/admin\/v1\/usage$/,
      /^GET \/admin\/v1\/teams$/,
      /^GET \/admin\/v1\/teams\/[^/]+$/,
      /^GET \/admin\/v1\/teams\/[^/]+\/tokens$/,
      /^GET \/admin\/v1\/teams\/[^/]+\/budget$/,
      /^POST \/admin\/v1\/teams\/[^/]+\/tokens$/,
      /^POST \/admin\/v1\/tokens\/[^/]+\/rotate$/,
      /^GET \/admin\/v1\/deployments$/,
      /^GET \/admin\/v1\/audit$/,
    ];
    expect(kinds.filter((kind) => !reads.some(({ method, path }) => kind.test(`${method} ${path}`)))).toEqual(
      [],
    );
    // The two answers that issue a secret do carry it (the exception below is not what lets the rest pass).
    const issuing = reads.filter(({ method, path }) => issuesASecret(method, path));
    expect(issuing.map(({ body }) => TOKEN_SECRET.test(body))).toEqual([true, true]);
    expectNoSecretIn(reads, { adminKey: ADMIN_KEY, upstreamKey: UPSTREAM_KEY });
  });

  it('shows how full each budget is in the team list', async () => {
    const { page } = await signedIn('alice');
    const team = unique('budgeted');
    expect(
      (await gw.admin('POST', '/admin/v1/teams', { id: team, limits: { budgetPerDay: 5 } })).status,
    ).toBe(201);
    await page.goto(`${gw.url}/console#/teams`);
    await page.getByLabel('Search teams').fill(team);
    await expect(page.getByTestId(`budget-${team}`).textContent()).resolves.toBe('0 %');
  });

  it('names limits by their labels and fills each team\'s "tokens today" bar against its own daily quota', async () => {
    const { page } = await signedIn('alice');
    // The quota team has a 28-token day and uses 7 of it (a quarter); the busy one has no quota and uses 21, the most.
    const bars = unique('bars');
    const [quotaTeam, busyTeam] = [`${bars}-quota`, `${bars}-busy`];
    expect(
      (
        await gw.admin('POST', '/admin/v1/teams', {
          id: quotaTeam,
          limits: { tokensPerDay: 28, requestsPerMinute: 600, budgetPerMonth: 12.5 },
        })
      ).status,
    ).toBe(201);
    const quota = await gw.teamToken(quotaTeam);
    const busy = await gw.teamToken(busyTeam);
    await gw.openai(quota.token).chat.completions.create({
      model: 'priced',
      max_tokens: 10,
      messages: [{ role: 'user', content: 'one two three' }],
    }); // priced: it has a budget; max_tokens: its reservation fits the day
    for (let i = 0; i < 3; i++) await chat(gw, busy.token, 'echo', 'one two three');
    await waitForUsageSummary(gw, `team=${quotaTeam}`, 1);
    await waitForUsageSummary(gw, `team=${busyTeam}`, 3);
    await page.goto(`${gw.url}/console#/teams`);
    await page.getByLabel('Search teams').fill(`${bars}-`);
    await eventually(async () => expect(await page.locator('table.teams tbody tr').count()).toBe(2), 5000);
    for (const name of LIMIT_NAMES) expect(await page.locator('main').textContent()).not.toContain(name);
    const meter = page.getByRole('meter', { name: `Tokens today of ${quotaTeam}` });
    await eventually(async () => expect(await meter.getAttribute('aria-valuenow')).toBe('7'), 5000);
    expect(await meter.getAttribute('aria-valuemax')).toBe('28');
    const [outer, inner] = await Promise.all([meter.boundingBox(), meter.locator('div').boundingBox()]);
    expect(inner!.width / outer!.width).toBeCloseTo(0.25, 1);
    expect(await page.getByRole('meter', { name: `Tokens today of ${busyTeam}` }).count()).toBe(0);
    const busyRow = page.locator('table.teams tbody tr', {
      has: page.getByRole('link', { name: busyTeam }),
    });
    expect((await busyRow.textContent())!.replace(/\s+/g, ' ')).toContain('21 no daily quota');
    const quotaRow = page.locator('table.teams tbody tr', {
      has: page.getByRole('link', { name: quotaTeam }),
    });
    expect(await quotaRow.textContent()).toContain(
      'Requests / minute: 600Tokens / day: 28Budget / month: $12.50',
    );
    await shot(page, 'teams-bars');
    await page.getByRole('link', { name: quotaTeam }).click();
    await page.getByRole('meter', { name: 'Tokens / day' }).waitFor();
    const limits = page.getByTestId('limits');
    for (const name of LIMIT_NAMES) expect(await page.locator('main').textContent()).not.toContain(name); // labels, never keys
    expect(await limits.textContent()).toContain('Requests / minute600');
    expect(await limits.textContent()).toContain(`Budget / month${PRICED_COST} of $12.50 spent`);
  });

  it('shows a budget saved on the team page at once, with how much of it is spent, and no caption of another kind of limit', async () => {
    const { page } = await signedIn('alice');
    const team = unique('budget-edit');
    expect(
      (await gw.admin('POST', '/admin/v1/teams', { id: team, limits: { tokensPerDay: 100000 } })).status,
    ).toBe(201);
    await page.goto(`${gw.url}/console#/teams/${team}`);
    await page.getByRole('meter', { name: 'Tokens / day' }).waitFor();
    await page.getByText('Edit models, limits and metadata').click();
    await page.getByRole('spinbutton', { name: 'Budget / day' }).fill('5');
    await page.getByRole('button', { name: 'Save' }).click();
    await page.getByRole('status').filter({ hasText: 'Saved.' }).waitFor();
    await page.getByRole('meter', { name: 'Budget / day' }).waitFor();
    expect(await page.getByTestId('limits').textContent()).toContain('Budget / day$0.00 of $5.00 spent');
    expect(await page.locator('main').textContent()).not.toContain('not kept'); // no per-minute limit or concurrency here
    await page.getByRole('spinbutton', { name: 'Budget / day' }).fill('6');
    expect(await page.getByRole('status').count()).toBe(0); // "Saved." is gone once the form is changed again
  });

  it('writes money by its magnitude in its currency, never as a row of zeros', async () => {
    // A gateway of its own: the overview's spend today is this test's two requests alone.
    const own = await ownGateway();
    const { page } = await signedIn('alice', own);
    const team = unique('money');
    const { token } = await own.teamToken(team);
    await chat(own, token, 'priced', 'one two three');
    await chat(own, token, 'echo', 'one two three'); // no price: the overview says so beside the spend
    await waitForUsageSummary(own, `team=${team}`, 2);
    await page.goto(`${own.url}/console#/teams/${team}`);
    const row = page.getByTestId('usage-by-model').getByRole('row', { name: /^priced/ });
    await row.waitFor();
    const spend = (await row.getByRole('cell').last().textContent())!;
    expect(spend).toBe(PRICED_COST); // a few millionths of a dollar, two significant digits, no "USD"
    await page.getByRole('link', { name: 'Overview' }).click();
    await expect(page.getByTestId('spend-today').locator('strong').textContent()).resolves.toBe(PRICED_COST);
    await expect(page.getByTestId('spend-today').locator('small').textContent()).resolves.toBe(
      '+ 1 unpriced requests',
    );
    await shot(page, 'overview-money');
  });

  it('draws a day whose spend is unknown (none of its requests had a price) as unknown, never as $0', async () => {
    const { page } = await signedIn('alice');
    const team = unique('unpriced-team');
    const { token } = await gw.teamToken(team, ['echo']);
    await chat(gw, token, 'echo', 'one two three');
    const usage = await waitForUsageSummary(gw, `team=${team}`, 1);
    expect(usage.total.cost).toBeNull();
    await page.goto(`${gw.url}/console#/teams/${team}`);
    const row = page.getByTestId('usage-by-model').getByRole('row', { name: /^echo/ });
    await row.waitFor();
    expect(await row.getByRole('cell').last().textContent()).toBe('unpriced');
    // uPlot's legend shows the value under the cursor: today, at the right end of the spend chart.
    const plot = page.locator('[data-chart^="Spend per day"] .u-over');
    await plot.hover({ position: { x: (await plot.boundingBox())!.width - 1, y: 20 } });
    await expect(
      page.locator('[data-chart^="Spend per day"] .u-legend .u-value').nth(1).textContent(),
    ).resolves.toBe('unknown');
  });

  it('sends only what a user changed on the team page (null for a limit emptied or a label removed), and keeps the rest', async () => {
    const { page } = await signedIn('alice');
    const team = {
      id: unique('limits-edit'),
      models: ['echo'],
      limits: { tokensPerDay: 100000, requestsPerMinute: 60, budgetPerMonth: 20 },
      metadata: { owner: 'ml', tier: 'gold' },
    };
    expect((await gw.admin('POST', '/admin/v1/teams', team)).status).toBe(201);
    await page.goto(`${gw.url}/console#/teams/${team.id}`);
    await page.getByText('Edit models, limits and metadata').click();
    await page.getByRole('spinbutton', { name: 'Tokens / minute' }).fill('500');
    await page.getByRole('spinbutton', { name: 'Requests / minute' }).fill('');
    const [patch] = await Promise.all([
      page.waitForRequest((r) => r.method() === 'PATCH'),
      page.getByRole('button', { name: 'Save' }).click(),
    ]);
    expect(new URL(patch.url()).pathname).toBe(`/admin/v1/teams/${team.id}`);
    expect(JSON.parse(patch.postData()!)).toEqual({
      limits: { tokensPerMinute: 500, requestsPerMinute: null },
    });
    await page.getByRole('status').filter({ hasText: 'Saved.' }).waitFor();
    const saved = (await gw.admin('GET', `/admin/v1/teams/${team.id}`)).body;
    expect(saved).toMatchObject({
      models: ['echo'],
      limits: { tokensPerDay: 100000, tokensPerMinute: 500, budgetPerMonth: 20 },
      metadata: { owner: 'ml', tier: 'gold' },
    });
    expect(saved.limits.requestsPerMinute).toBeUndefined(); // no other limit dropped, the emptied one removed
    await shot(page, 'team-edit');

    // Saved again untouched: nothing is sent. A label changed and one removed: only those.
    let patches = 0;
    const count = (r: { method(): string }) => void (r.method() === 'PATCH' && patches++);
    page.on('request', count);
    await page.getByRole('button', { name: 'Save' }).click();
    await page.getByRole('status').filter({ hasText: 'Nothing changed.' }).waitFor();
    expect(patches).toBe(0);
    page.off('request', count);
    await page.getByLabel('Metadata (JSON object of strings)').fill('{"owner": "research"}');
    const [metadataOnly] = await Promise.all([
      page.waitForRequest((r) => r.method() === 'PATCH'),
      page.getByRole('button', { name: 'Save' }).click(),
    ]);
    expect(JSON.parse(metadataOnly.postData()!)).toEqual({ metadata: { owner: 'research', tier: null } });
    await page.getByRole('status').filter({ hasText: 'Saved.' }).waitFor();
    expect((await gw.admin('GET', `/admin/v1/teams/${team.id}`)).body).toMatchObject({
      metadata: { owner: 'research' },
      limits: { tokensPerDay: 100000, tokensPerMinute: 500, budgetPerMonth: 20 },
    });
    expect((await gw.admin('GET', `/admin/v1/teams/${team.id}`)).body.metadata.tier).toBeUndefined();
  });

  it('signs out, and the old cookie no longer opens the admin API', async () => {
    const { page, context } = await signedIn('alice');
    await page.goto(`${gw.url}/console/`);
    const [cookie] = await context.cookies(gw.url);
    expect(cookie.name).toBe('sy_console');
    await page.getByRole('button', { name: 'Sign out' }).click();
    await page.getByRole('button', { name: 'Sign in' }).waitFor();
    const stale = await fetch(`${gw.url}/admin/v1/teams`, {
      headers: { cookie: `sy_console=${cookie.value}` },
    });
    expect(stale.status).toBe(401);
    expect(await context.cookies(gw.url)).toHaveLength(0);
  });

  it('refuses sign-in from an address after five wrong keys, the right key included, and not from others', async () => {
    const signIn = (adminKey: string, from: string) =>
      fetch(`${gw.url}/console/api/session`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'x-forwarded-for': from },
        body: JSON.stringify({ adminKey, name: 'guesser' }),
      });
    const statuses: number[] = [];
    for (let i = 0; i < 5; i++) statuses.push((await signIn(`guess-${i}`, '203.0.113.7')).status);
    expect(statuses).toEqual([401, 401, 401, 401, 401]);
    const blocked = await signIn(ADMIN_KEY, '203.0.113.7');
    expect(blocked.status).toBe(429);
    expect(Number(blocked.headers.get('retry-after'))).toBeGreaterThan(0);
    expect(((await blocked.json()) as any).error.code).toBe('rate_limit_exceeded');
    expect((await signIn(ADMIN_KEY, '203.0.113.8')).status).toBe(201);
  });

  it('ran without a script error or a Content-Security-Policy violation on any page', async () => {
    // Every test's pages are checked the same way after it (afterEach); this one opens every page itself.
    const session = await openConsole();
    await visitEveryPage(session);
    expect(session.errors).toEqual([]);
  });

  it('is off with console.enabled: false (no page, no sign-in, no session cookie accepted)', async () => {
    // A session made while the console was on, presented to a replica that has it off (same Redis data).
    const signIn = await fetch(`${gw.url}/console/api/session`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ adminKey: ADMIN_KEY, name: 'x' }),
    });
    const cookie = signIn.headers.get('set-cookie')!.split(';')[0];
    const off = await startTestGateway({
      upstreamUrl: upstream.url,
      config: { console: { enabled: false } },
      prefix: gw.prefix,
    });
    try {
      expect((await fetch(`${gw.url}/admin/v1/teams`, { headers: { cookie } })).status).toBe(200);
      expect((await fetch(`${off.url}/admin/v1/teams`, { headers: { cookie } })).status).toBe(401);
      expect((await fetch(`${off.url}/console/`)).status).toBe(404);
      expect((await fetch(`${off.url}/console`, { redirect: 'manual' })).status).toBe(404);
      const signIn = await fetch(`${off.url}/console/api/session`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ adminKey: ADMIN_KEY, name: 'x' }),
      });
      expect(signIn.status).toBe(404);
    } finally {
      await off.close();
    }
  });
});
