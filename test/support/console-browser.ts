import { join } from 'node:path';
import type { Browser, BrowserContext, Page } from 'playwright-core';

/** Where the console's screenshots go (test-results/console/<name>-<width>.png). */
export const CONSOLE_SHOTS = join(__dirname, '../../test-results/console');

/** An admin API (or sign-in) response the page read. */
export interface ConsoleRead {
  method: string;
  path: string;
  body: string;
}

/**
 * One user's browser on the console: a browser context of its own (its own cookies, so its own session), one page,
 * and what the page did that a test checks afterwards.
 */
export interface ConsoleBrowser {
  context: BrowserContext;
  page: Page;
  /** What the browser reported as errors (a CSP violation included). */
  errors: string[];
  /** Every admin API (and sign-in) response the page read, to check that none holds a secret or a hash. */
  reads: Array<Promise<ConsoleRead>>;
}

/**
 * A fresh browser context on the gateway at `gatewayUrl`, signed out, with the clipboard allowed. confirm() (before
 * revoking or deleting) is accepted; any other dialog is an error, as the page asks for everything else in its own
 * forms, never with prompt().
 */
export async function openConsoleBrowser(browser: Browser, gatewayUrl: string): Promise<ConsoleBrowser> {
  const context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
  await context.grantPermissions(['clipboard-read', 'clipboard-write'], { origin: gatewayUrl });
  const page = await context.newPage();
  const errors: string[] = [];
  const reads: Array<Promise<ConsoleRead>> = [];
  page.on('dialog', (dialog) => {
    if (dialog.type() !== 'confirm') errors.push(`a browser ${dialog.type()}(): ${dialog.message()}`);
    void (dialog.type() === 'confirm' ? dialog.accept() : dialog.dismiss());
  });
  // 401 and 403 are answers the tests ask for (a wrong key, a missing CSRF token); Chromium logs each as an error.
  page.on(
    'console',
    (message) =>
      message.type() === 'error' && !/status of 40[13]/.test(message.text()) && errors.push(message.text()),
  );
  page.on('pageerror', (error) => errors.push(error.message));
  page.on('response', (response) => {
    const path = new URL(response.url()).pathname;
    if (path.startsWith('/admin/v1/') || path.startsWith('/console/api/'))
      reads.push(
        response.text().then(
          (body) => ({ method: response.request().method(), path, body }),
          () => ({ method: '', path, body: '' }),
        ),
      );
  });
  return { context, page, errors, reads };
}

/**
 * Signs the browser in without the form: the same POST /console/api/session the sign-in page sends, made through
 * the context's own request client, which keeps the session cookie in the context's cookie jar. The page then
 * reads the CSRF token from GET /console/api/session when it loads, as after a reload.
 */
export async function signInWithoutForm(
  { context }: ConsoleBrowser,
  gatewayUrl: string,
  adminKey: string,
  name: string,
): Promise<void> {
  const response = await context.request.post(`${gatewayUrl}/console/api/session`, {
    data: { adminKey, name },
  });
  if (response.status() !== 201)
    throw new Error(`console sign-in failed: ${response.status()} ${await response.text()}`);
}

/**
 * Checks that no response the page read holds a secret or a hash: no SHA-256 (token hashes, session digests), not
 * the admin key, not an upstream key, and a token secret only in the response that issued it.
 */
export function expectNoSecretIn(reads: ConsoleRead[], secrets: { adminKey: string; upstreamKey: string }) {
  for (const { method, path, body } of reads) {
    expect(body).not.toMatch(/\b[0-9a-f]{64}\b/);
    expect(body).not.toContain(secrets.adminKey);
    expect(body).not.toContain(secrets.upstreamKey);
    if (!issuesASecret(method, path)) expect(body).not.toMatch(TOKEN_SECRET);
  }
}

/** A team token's secret (`sy-<16 hex id>-<43 base64url>`). */
/**
 * Closes the sessions a test opened and checks each: no script error, no CSP violation, no alert() (a dialog other
 * than confirm() is an error), and no secret in anything the page read. `also` runs first, on each open page.
 */
export async function closeCheckedSessions(
  opened: ConsoleBrowser[],
  secrets: { adminKey: string; upstreamKey: string },
  also?: (session: ConsoleBrowser) => Promise<void>,
): Promise<void> {
  for (const session of opened.splice(0)) {
    const reads = await Promise.all(session.reads);
    await also?.(session);
    await session.context.close();
    expect(session.errors).toEqual([]);
    expectNoSecretIn(reads, secrets);
  }
}

export const TOKEN_SECRET = /sy-[0-9a-f]{16}-[A-Za-z0-9_-]{43}/;

/** The admin API answers that carry a token's secret: issuing a token and rotating one (a team's, or one's own). */
export function issuesASecret(method: string, path: string): boolean {
  return (
    method === 'POST' &&
    /^\/admin\/v1\/(?:me\/)?(?:teams\/[^/]+\/tokens|(?:teams\/[^/]+\/)?tokens\/[^/]+\/rotate)$/.test(path)
  );
}

/**
 * The page at the two widths the console is used at (a 1366 px laptop, a 1024 px window): a screenshot of each
 * (test-results/console/<name>-<width>.png), no word in a table cell, a card or the limits list cut across two
 * lines ("activ|e", "127.0|.0.1"; cells of free text, .wrap, may break long strings), and nothing wider than
 * the window.
 */
export async function shot(page: Page, name: string): Promise<void> {
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
    await page.screenshot({ path: join(CONSOLE_SHOTS, `${name}-${width}.png`), fullPage: true });
  }
  await page.setViewportSize(before);
}

/**
 * Every word (a run of non-spaces) in the page's table cells, cards and limit rows that the browser laid out over
 * more than one line; cells marked .wrap (free text) are left out. (Browser globals through globalThis: this file
 * is type-checked without the DOM library.)
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
