import { mkdirSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { AccessAdminService } from '../../src/admin/access-admin.service';
import { LIMIT_NAMES } from '../../src/limits/limit-catalogue';
import { launchChromium } from '../support/browser';
import { eventually } from '../support/eventually';
import { OpenAIUpstream } from '../support/openai-upstream';
import { ADMIN_KEY, startTestGateway, type TestGateway } from '../support/test-gateway';

const SHOTS = join(__dirname, '../../test-results/console');

/**
 * The admin console in a real browser (Debian's Chromium through playwright-core), against the whole gateway on
 * a port: sign-in, a team created, a token issued and copied, used for a real chat request, seen in the team's
 * usage, revoked, and sign-out; a wrong key and a change without the CSRF token refused. Screenshots of every
 * page go to test-results/console/.
 */
describe('the admin console', () => {
  jest.setTimeout(120_000);
  let upstream: OpenAIUpstream;
  let gw: TestGateway;
  let browser: Browser;
  let context: BrowserContext;
  let page: Page;
  /** What the browser reported as errors (a CSP violation included), checked at the end. */
  const browserErrors: string[] = [];
  /** Every admin API (and sign-in) response the page read, to check that none holds a secret or a hash. */
  const read: Array<Promise<{ method: string; path: string; body: string }>> = [];

  beforeAll(async () => {
    rmSync(SHOTS, { recursive: true, force: true }); // only this run's screenshots
    mkdirSync(SHOTS, { recursive: true });
    browser = await launchChromium();
    upstream = await new OpenAIUpstream().start();
    // `priced` costs a few millionths of a dollar a request: how the console writes money that small.
    // `nowhere` cannot be reached: the models page says its deployment is down and its model hidden, and why.
    gw = await startTestGateway({
      upstreamUrl: upstream.url,
      config: {
        backends: { nowhere: { type: 'openai', baseUrl: 'http://127.0.0.1:1', apiKey: 'x' } },
        models: {
          priced: { backend: 'standin', upstreamModel: 'echo', price: { input: 2, output: 8 } },
          unreachable: { backend: 'nowhere', upstreamModel: 'x' },
        },
      },
    });
    context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
    await context.grantPermissions(['clipboard-read', 'clipboard-write'], { origin: gw.url });
    page = await context.newPage();
    // confirm() before revoking or deleting is accepted; the page asks for anything else in its own forms, never prompt().
    page.on('dialog', (dialog) => {
      if (dialog.type() !== 'confirm')
        browserErrors.push(`a browser ${dialog.type()}(): ${dialog.message()}`);
      void (dialog.type() === 'confirm' ? dialog.accept() : dialog.dismiss());
    });
    page.on(
      'console',
      (message) =>
        message.type() === 'error' &&
        !/status of 40[13]/.test(message.text()) &&
        browserErrors.push(message.text()),
    );
    page.on('pageerror', (error) => browserErrors.push(error.message));
    page.on('response', (response) => {
      const path = new URL(response.url()).pathname;
      if (path.startsWith('/admin/v1/') || path.startsWith('/console/api/'))
        read.push(
          response.text().then(
            (body) => ({ method: response.request().method(), path, body }),
            () => ({ method: '', path, body: '' }),
          ),
        );
    });
  }, 900_000); // installing Chromium from Debian's packages, on a machine without it
  afterAll(async () => {
    await browser?.close();
    await gw?.close();
    await upstream?.stop();
  });

  /**
   * The page at the two widths the console is used at (a 1366 px laptop, a 1024 px window): a screenshot of each
   * (test-results/console/<name>-<width>.png), no word in a table cell, a card or the limits list cut across two
   * lines ("activ|e", "127.0|.0.1"; cells of free text, .wrap, may break long strings), and nothing wider than
   * the window.
   */
  const shot = async (name: string) => {
    const before = page.viewportSize()!;
    for (const width of [1366, 1024]) {
      await page.setViewportSize({ width, height: 900 });
      await page.evaluate(
        () =>
          new Promise((done) =>
            (globalThis as any).requestAnimationFrame(() => (globalThis as any).requestAnimationFrame(done)),
          ),
      );
      expect({ width, name, cut: await cutWords(page) }).toEqual({ width, name, cut: [] });
      // Nothing wider than the window (a chart drawn for another width, a table outside its scroll box).
      expect({
        width,
        name,
        pageWidth: await page.evaluate(() => (globalThis as any).document.documentElement.scrollWidth),
      }).toEqual({ width, name, pageWidth: width });
      await page.screenshot({ path: join(SHOTS, `${name}-${width}.png`), fullPage: true });
    }
    await page.setViewportSize(before);
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
    const response = await page.goto(`${gw.url}/console`); // as docs/console.md prints it
    expect(new URL(page.url()).pathname).toBe('/console/');
    expect(response!.status()).toBe(200);
    expect(response!.headers()['content-security-policy']).toContain("script-src 'self'");
    expect(response!.headers()['content-security-policy']).not.toContain('unsafe-inline');
    await page.getByLabel('Your name (for the audit trail)').fill('alice');
    await page.getByLabel('Admin key').fill('not-the-key');
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByRole('alert').filter({ hasText: 'The admin key is not valid.' }).waitFor();
    await shot('sign-in');
  });

  it('signs in to a session cookie, never keeping the key in the browser', async () => {
    await page.getByLabel('Admin key').fill(ADMIN_KEY);
    await page.getByRole('button', { name: 'Sign in' }).click();
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
    await page.getByRole('link', { name: 'Teams' }).click();
    await page.getByText('Create a team').click();
    await page.getByLabel('Id').fill('console-team');
    await page.getByLabel('Tokens / day').fill('100000');
    await page.getByRole('button', { name: 'Create team' }).click();
    await page.getByRole('status').filter({ hasText: 'Team console-team created.' }).waitFor();
    await shot('teams');
    await page.getByRole('link', { name: 'console-team' }).click();
    await page.getByRole('heading', { name: /console-team/ }).waitFor();

    await page.getByLabel('Token name').fill('ci');
    await page.getByRole('button', { name: 'Issue token' }).click();
    const secret = (await page.getByTestId('token-secret').textContent())!;
    expect(secret).toMatch(/^sy-[0-9a-f]{16}-/);
    await page.getByRole('button', { name: 'Copy' }).click();
    await page.getByRole('button', { name: 'Copied' }).waitFor();
    expect(await page.evaluate(() => (globalThis as any).navigator.clipboard.readText())).toBe(secret);

    // The copied token answers a real chat request (the openai SDK), and the team's page shows it.
    const answer = await gw
      .openai(secret)
      .chat.completions.create({ model: 'echo', messages: [{ role: 'user', content: 'one two three' }] });
    expect(answer.usage!.total_tokens).toBe(7);
    await eventually(
      async () =>
        expect((await gw.admin('GET', '/admin/v1/usage?team=console-team')).body.total.requests).toBe(1),
      5000,
    );
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
    await shot('team');

    // Rotate: the page asks for the grace period in its own dialog (never prompt()); a new secret shown once, and the
    // old one keeps working for the grace period asked.
    await page.getByRole('button', { name: 'Rotate' }).click();
    const dialog = page.getByRole('dialog', { name: /Rotate token/ });
    await expect(dialog.getByLabel('Grace period (seconds)').inputValue()).resolves.toBe('3600');
    await shot('rotate-dialog');
    await dialog.getByRole('button', { name: 'Cancel' }).click();
    await dialog.waitFor({ state: 'detached' });
    await page.getByRole('button', { name: 'Rotate' }).click();
    await dialog.getByLabel('Grace period (seconds)').fill('600');
    await dialog.getByRole('button', { name: 'Rotate' }).click();
    await page.getByRole('button', { name: 'Copy' }).waitFor();
    await dialog.waitFor({ state: 'detached' });
    const rotated = (await page.getByTestId('token-secret').textContent())!;
    expect(rotated).not.toBe(secret);
    expect(rotated.slice(0, 19)).toBe(secret.slice(0, 19)); // same token id
    for (const key of [rotated, secret])
      await gw
        .openai(key)
        .chat.completions.create({ model: 'echo', messages: [{ role: 'user', content: 'x' }] });
    expect((await gw.admin('GET', '/admin/v1/audit?action=token.rotate')).body.data[0].details).toEqual({
      graceSeconds: 600,
    });
    await page.getByRole('button', { name: 'Done' }).click();

    await page.getByRole('button', { name: 'Revoke' }).click();
    await page.getByTestId('tokens').getByText('revoked').waitFor();
    for (const key of [rotated, secret]) {
      const refused = await gw
        .openai(key)
        .chat.completions.create({ model: 'echo', messages: [{ role: 'user', content: 'x' }] })
        .then(
          () => 200,
          (e: { status: number }) => e.status,
        );
      expect(refused).toBe(401);
    }
  });

  it('lists models with their health and the audit trail, every change made by the signed-in name', async () => {
    await page.getByRole('link', { name: 'Models' }).click();
    await page.getByRole('cell', { name: 'echo', exact: true }).first().waitFor();
    expect((await page.getByTestId('status-echo:standin/echo').textContent())!.trim()).toBe('up');
    const down = (await page.getByTestId('status-unreachable:nowhere/x').textContent())!;
    expect(down).toMatch(/^down .*unreachable/i);
    expect(down).toContain('unreachable is not listed in /v1/models: no deployment of it is up');
    expect(
      await page.getByTestId('status-unreachable:nowhere/x').locator('div').getAttribute('title'),
    ).toMatch(/nowhere\/x: unreachable/);
    await shot('models');
    await page.getByRole('link', { name: 'Audit trail' }).click();
    await page.getByLabel('Action').fill('token.revoke');
    await page.getByRole('button', { name: 'Filter' }).click();
    const entry = page.getByTestId('audit').getByRole('row', { name: /token\.revoke/ });
    await entry.first().waitFor();
    expect(await entry.first().textContent()).toContain('console:alice');
    await page.getByLabel('Action').fill('');
    await page.getByRole('button', { name: 'Filter' }).click();
    await page
      .getByTestId('audit')
      .getByRole('row', { name: /team\.create/ })
      .first()
      .waitFor();
    await shot('audit');
    await page.getByRole('link', { name: 'Overview' }).click();
    await page.getByTestId('requests-today').getByText('3').waitFor();
    await page.locator('[data-chart="Tokens per day"] canvas').waitFor();
    await shot('overview');
  });

  it('refuses a change without the CSRF token, from the page and from outside it', async () => {
    const fromPage = await page.evaluate(async () => {
      const response = await fetch('/admin/v1/teams', {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ id: 'forged' }),
      });
      return { status: response.status, body: await response.json() };
    });
    expect(fromPage).toMatchObject({ status: 403, body: { error: { code: 'csrf_token_invalid' } } });
    const [cookie] = await context.cookies(gw.url);
    const outside = await fetch(`${gw.url}/admin/v1/teams`, {
      method: 'POST',
      headers: { cookie: `sy_console=${cookie.value}`, 'content-type': 'application/json' },
      body: JSON.stringify({ id: 'forged' }),
    });
    expect(outside.status).toBe(403);
    expect((await gw.admin('GET', '/admin/v1/teams/forged')).status).toBe(404);
  });

  it('shows team metadata as text, whatever it holds', async () => {
    const hostile = '<img src=x onerror="window.__owned=1"><script>window.__owned=2</script>';
    expect(
      (await gw.admin('POST', '/admin/v1/teams', { id: 'hostile', metadata: { note: hostile } })).status,
    ).toBe(201);
    await page.goto(`${gw.url}/console#/teams/hostile`);
    await page.getByTestId('metadata').getByText(hostile, { exact: true }).waitFor();
    expect(await page.evaluate(() => (globalThis as any).__owned)).toBeUndefined();
    expect(await page.locator('main img').count()).toBe(0);
  });

  it('lists and filters 1,000 teams with 10,000 tokens a page at a time, without a stall', async () => {
    // Seeded through the admin service itself (what the API calls), 1,000 teams of 10 tokens.
    const admin = gw.gateway.app.get(AccessAdminService);
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
      await page.goto(`${gw.url}/console#/teams`);
      await page.getByRole('link', { name: 'org-0000' }).waitFor();
    });
    expect(await page.locator('table.teams tbody tr').count()).toBe(50);
    await shot('teams-1000');
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
    const responses = await Promise.all(read);
    expect(responses.length).toBeGreaterThan(20);
    for (const { method, path, body } of responses) {
      expect(body).not.toMatch(/\b[0-9a-f]{64}\b/); // a SHA-256 (token hashes, session digests)
      expect(body).not.toContain(ADMIN_KEY);
      expect(body).not.toContain('upstream-secret-key');
      const issuing =
        method === 'POST' && /^\/admin\/v1\/(teams\/[^/]+\/tokens|tokens\/[^/]+\/rotate)$/.test(path);
      if (!issuing) expect(body).not.toMatch(/sy-[0-9a-f]{16}-[A-Za-z0-9_-]{43}/);
    }
  });

  it('shows how full each budget is in the team list', async () => {
    expect(
      (await gw.admin('POST', '/admin/v1/teams', { id: 'budgeted', limits: { budgetPerDay: 5 } })).status,
    ).toBe(201);
    await page.goto(`${gw.url}/console#/teams`);
    await page.getByLabel('Search teams').fill('budgeted');
    await expect(page.getByTestId('budget-budgeted').textContent()).resolves.toBe('0 %');
  });

  it('names limits by their labels and fills each team\'s "tokens today" bar against its own daily quota', async () => {
    // bars-quota has a 28-token day and uses 7 of it (a quarter); bars-busy has no quota and uses 21, the most.
    expect(
      (
        await gw.admin('POST', '/admin/v1/teams', {
          id: 'bars-quota',
          limits: { tokensPerDay: 28, requestsPerMinute: 600, budgetPerMonth: 12.5 },
        })
      ).status,
    ).toBe(201);
    const quota = await gw.teamToken('bars-quota');
    const busy = await gw.teamToken('bars-busy');
    await gw.openai(quota.token).chat.completions.create({
      model: 'priced',
      max_tokens: 10,
      messages: [{ role: 'user', content: 'one two three' }],
    }); // priced: it has a budget; max_tokens: its reservation fits the day
    for (let i = 0; i < 3; i++)
      await gw
        .openai(busy.token)
        .chat.completions.create({ model: 'echo', messages: [{ role: 'user', content: 'one two three' }] });
    await page.goto(`${gw.url}/console#/teams`);
    await page.getByLabel('Search teams').fill('bars-');
    await eventually(async () => expect(await page.locator('table.teams tbody tr').count()).toBe(2), 5000);
    for (const name of LIMIT_NAMES) expect(await page.locator('main').textContent()).not.toContain(name);
    const meter = page.getByRole('meter', { name: 'Tokens today of bars-quota' });
    await eventually(async () => expect(await meter.getAttribute('aria-valuenow')).toBe('7'), 5000);
    expect(await meter.getAttribute('aria-valuemax')).toBe('28');
    const [outer, inner] = await Promise.all([meter.boundingBox(), meter.locator('div').boundingBox()]);
    expect(inner!.width / outer!.width).toBeCloseTo(0.25, 1);
    expect(await page.getByRole('meter', { name: 'Tokens today of bars-busy' }).count()).toBe(0);
    const busyRow = page.locator('table.teams tbody tr', {
      has: page.getByRole('link', { name: 'bars-busy' }),
    });
    expect((await busyRow.textContent())!.replace(/\s+/g, ' ')).toContain('21 no daily quota');
    const quotaRow = page.locator('table.teams tbody tr', {
      has: page.getByRole('link', { name: 'bars-quota' }),
    });
    expect(await quotaRow.textContent()).toContain(
      'Requests / minute: 600Tokens / day: 28Budget / month: $12.50',
    );
    await shot('teams-bars');
    await page.getByRole('link', { name: 'bars-quota' }).click();
    await page.getByRole('meter', { name: 'Tokens / day' }).waitFor();
    const limits = page.getByTestId('limits');
    for (const name of LIMIT_NAMES) expect(await page.locator('main').textContent()).not.toContain(name); // labels, never keys
    expect(await limits.textContent()).toContain('Requests / minute600');
    expect(await limits.textContent()).toMatch(/Budget \/ month\$0\.0000\d\d? of \$12\.50 spent/);
  });

  it('shows a budget saved on the team page at once, with how much of it is spent, and no caption of another kind of limit', async () => {
    await page.goto(`${gw.url}/console#/teams/console-team`);
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
    await page.getByRole('spinbutton', { name: 'Budget / day' }).fill('5');
  });

  it('writes money by its magnitude in its currency, never as a row of zeros', async () => {
    const { token } = await gw.teamToken('console-team');
    await gw
      .openai(token)
      .chat.completions.create({ model: 'priced', messages: [{ role: 'user', content: 'one two three' }] });
    await page.goto(`${gw.url}/console#/teams/console-team`);
    const row = page.getByTestId('usage-by-model').getByRole('row', { name: /^priced/ });
    await row.waitFor();
    const spend = (await row.getByRole('cell').last().textContent())!;
    expect(spend).toMatch(/^\$0\.0000\d\d?$/); // a few millionths of a dollar, two significant digits
    expect(spend).not.toContain('USD');
    await page.getByRole('link', { name: 'Overview' }).click();
    await expect(page.getByTestId('spend-today').locator('strong').textContent()).resolves.toMatch(
      /^\$0\.0000\d\d?$/,
    );
    await expect(page.getByTestId('spend-today').locator('small').textContent()).resolves.toMatch(
      /^\+ \d+ unpriced requests$/,
    );
    await shot('overview-money');
  });

  it('draws a day whose spend is unknown (none of its requests had a price) as unknown, never as $0', async () => {
    const { token } = await gw.teamToken('unpriced-team', ['echo']);
    await gw
      .openai(token)
      .chat.completions.create({ model: 'echo', messages: [{ role: 'user', content: 'one two three' }] });
    await eventually(
      async () =>
        expect((await gw.admin('GET', '/admin/v1/usage?team=unpriced-team')).body.total).toMatchObject({
          requests: 1,
          cost: null,
        }),
      5000,
    );
    await page.goto(`${gw.url}/console#/teams/unpriced-team`);
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
    const team = {
      id: 'limits-edit',
      models: ['echo'],
      limits: { tokensPerDay: 100000, requestsPerMinute: 60, budgetPerMonth: 20 },
      metadata: { owner: 'ml', tier: 'gold' },
    };
    expect((await gw.admin('POST', '/admin/v1/teams', team)).status).toBe(201);
    await page.goto(`${gw.url}/console#/teams/limits-edit`);
    await page.getByText('Edit models, limits and metadata').click();
    await page.getByRole('spinbutton', { name: 'Tokens / minute' }).fill('500');
    await page.getByRole('spinbutton', { name: 'Requests / minute' }).fill('');
    const [patch] = await Promise.all([
      page.waitForRequest((r) => r.method() === 'PATCH'),
      page.getByRole('button', { name: 'Save' }).click(),
    ]);
    expect(new URL(patch.url()).pathname).toBe('/admin/v1/teams/limits-edit');
    expect(JSON.parse(patch.postData()!)).toEqual({
      limits: { tokensPerMinute: 500, requestsPerMinute: null },
    });
    await page.getByRole('status').filter({ hasText: 'Saved.' }).waitFor();
    const saved = (await gw.admin('GET', '/admin/v1/teams/limits-edit')).body;
    expect(saved).toMatchObject({
      models: ['echo'],
      limits: { tokensPerDay: 100000, tokensPerMinute: 500, budgetPerMonth: 20 },
      metadata: { owner: 'ml', tier: 'gold' },
    });
    expect(saved.limits.requestsPerMinute).toBeUndefined(); // no other limit dropped, the emptied one removed
    await shot('team-edit');

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
    expect((await gw.admin('GET', '/admin/v1/teams/limits-edit')).body).toMatchObject({
      metadata: { owner: 'research' },
      limits: { tokensPerDay: 100000, tokensPerMinute: 500, budgetPerMonth: 20 },
    });
    expect((await gw.admin('GET', '/admin/v1/teams/limits-edit')).body.metadata.tier).toBeUndefined();
  });

  it('signs out, and the old cookie no longer opens the admin API', async () => {
    const [cookie] = await context.cookies(gw.url);
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

  it('ran without a script error or a Content-Security-Policy violation on any page', () => {
    expect(browserErrors).toEqual([]);
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

/**
 * Every word (a run of non-spaces) in the page's table cells, cards and limit rows that the browser laid out over
 * more than one line; cells marked .wrap (free text) are left out.
 */
async function cutWords(page: Page): Promise<string[]> {
  return page.evaluate(() => {
    const document = (globalThis as any).document;
    const cut: string[] = [];
    for (const box of document.querySelectorAll('main td:not(.wrap), main th, main .card, main .limits li')) {
      const walker = document.createTreeWalker(box, 4 /* NodeFilter.SHOW_TEXT */);
      for (let node = walker.nextNode(); node; node = walker.nextNode()) {
        for (const word of (node.data as string).matchAll(/\S+/g)) {
          const range = document.createRange();
          range.setStart(node, word.index);
          range.setEnd(node, word.index! + word[0].length);
          const lines = new Set(
            [...range.getClientRects()].filter((r: any) => r.width > 0).map((r: any) => Math.round(r.top)),
          );
          if (lines.size > 1) cut.push(word[0]);
        }
      }
    }
    return cut;
  });
}
