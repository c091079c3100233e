import type { Browser } from 'playwright-core';
import { launchChromium } from '../support/browser';
import {
  closeCheckedSessions,
  openConsoleBrowser,
  shot,
  signInWithoutForm,
  type ConsoleBrowser,
} from '../support/console-browser';
import { freePort } from '../support/free-port';
import { RemoteMcpServer } from '../support/mcp-remote-server';
import { OpenAIUpstream } from '../support/openai-upstream';
import { ADMIN_KEY, startTestGateway, type TestGateway } from '../support/test-gateway';

const REMOTE_TOKEN = 'remote-server-credential';

/**
 * The console's MCP page in a real browser: the servers with their health and tools (one up, one down and why) and
 * each team's MCP permissions, and never the credential the gateway holds for a server.
 */
describe("the console's MCP page", () => {
  jest.setTimeout(120_000);
  let upstream: OpenAIUpstream;
  let remote: RemoteMcpServer;
  let gw: TestGateway;
  let browser: Browser;
  const opened: ConsoleBrowser[] = [];

  beforeAll(async () => {
    browser = await launchChromium();
    upstream = await new OpenAIUpstream().start();
    remote = await new RemoteMcpServer({ token: REMOTE_TOKEN }).start();
    gw = await startTestGateway({
      upstreamUrl: upstream.url,
      env: { MCP_REMOTE_TOKEN: REMOTE_TOKEN },
      config: {
        mcp: {
          servers: {
            remote: { url: remote.url, headers: { Authorization: 'Bearer ${MCP_REMOTE_TOKEN}' } },
            down: { url: `http://127.0.0.1:${await freePort()}/mcp` },
          },
        },
        teams: {
          builders: { mcp: { servers: ['remote'], tools: ['remote__echo'] } },
          bystanders: {},
        },
      },
    });
  }, 900_000); // installing Chromium from Debian's packages, on a machine without it
  afterAll(async () => {
    await browser?.close();
    await gw?.close();
    await Promise.all([upstream?.stop(), remote?.stop()]);
  });
  afterEach(async () => {
    await closeCheckedSessions(opened, { adminKey: ADMIN_KEY, upstreamKey: 'upstream-secret-key' });
  });

  it('lists the servers with their health and tools, and the teams that may reach them', async () => {
    const session = await openConsoleBrowser(browser, gw.url);
    opened.push(session);
    await signInWithoutForm(session, gw.url, ADMIN_KEY, 'mcp-viewer');
    const { page } = session;
    await page.goto(`${gw.url}/console/#/`);
    await page.getByRole('link', { name: 'MCP' }).click();
    const remoteRow = page.getByTestId('mcp-server-remote');
    await remoteRow.getByText('echo', { exact: true }).waitFor();
    expect(await remoteRow.textContent()).toContain(`remote: ${remote.url}`);
    expect(await remoteRow.locator('.status').textContent()).toMatch(/^up/);
    expect(await remoteRow.getByText('add', { exact: true }).getAttribute('title')).toBe('Adds two numbers');
    const downRow = page.getByTestId('mcp-server-down');
    expect((await downRow.locator('.status').textContent())!.trim()).toMatch(/^down unavailable: /);
    const team = page.getByTestId('mcp-team-builders');
    await team.waitFor();
    expect(await team.textContent()).toBe('buildersremoteremote__echo');
    expect(await page.getByTestId('mcp-team-bystanders').count()).toBe(0);
    expect(await page.content()).not.toContain(REMOTE_TOKEN);
    await shot(page, 'mcp');
  });
});
