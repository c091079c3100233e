import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { Browser } from 'playwright-core';
import { browserSignedIn } from '../support/admin-actors';
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
 * each team's MCP permissions, and never the credential the gateway holds for a server. On a team's page an
 * org-admin sets which servers and tools the team reaches, proven through /mcp with the official client; a
 * team-admin sees them and cannot change them.
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
          lab: {},
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
    // It failed, so it is skipped for a back-off, and the page says until when.
    expect(await downRow.getByTestId('mcp-retry-at').textContent()).toMatch(/Skipped until .+\./);
    expect(await remoteRow.getByTestId('mcp-retry-at').count()).toBe(0);
    const team = page.getByTestId('mcp-team-builders');
    await team.waitFor();
    expect(await team.textContent()).toBe('buildersremoteremote__echo');
    expect(await page.getByTestId('mcp-team-bystanders').count()).toBe(0);
    expect(await page.content()).not.toContain(REMOTE_TOKEN);
    await shot(page, 'mcp');
  });

  /** The names `token` lists through /mcp with the official client (a fresh connection each time). */
  async function toolsListed(token: string): Promise<string[]> {
    const client = new Client({ name: 'console-e2e', version: '1.0.0' });
    await client.connect(
      new StreamableHTTPClientTransport(new URL(`${gw.url}/mcp`), {
        requestInit: { headers: { authorization: `Bearer ${token}` } },
      }),
    );
    try {
      return (await client.listTools()).tools.map((tool) => tool.name).sort();
    } finally {
      await client.close();
    }
  }

  it('lets an org-admin grant a team a server and tool globs, in force through /mcp, and take them away', async () => {
    const { token } = await gw.teamToken('lab');
    expect(await toolsListed(token)).toEqual([]);
    const session = await openConsoleBrowser(browser, gw.url);
    opened.push(session);
    await signInWithoutForm(session, gw.url, ADMIN_KEY, 'mcp-editor');
    const { page } = session;
    await page.goto(`${gw.url}/console/#/teams/lab`);
    const section = page.getByTestId('team-mcp');
    await section.getByText('This team reaches no MCP server.').waitFor();
    await section.getByText('Edit MCP permissions').click();
    const remoteBox = section.getByRole('checkbox', { name: 'remote' });
    await remoteBox.waitFor();
    // Every configured server is offered, the down one too; none is ticked.
    expect(await section.getByRole('checkbox').count()).toBe(2);
    expect(await section.getByRole('checkbox', { name: 'down' }).isChecked()).toBe(false);
    await remoteBox.check();
    const globs = section.getByLabel('Tool globs');
    const save = section.getByRole('button', { name: 'Save MCP permissions' });

    // The API's refusal is shown as its message: an unprefixed tool name matches nothing.
    await globs.fill('echo');
    await save.click();
    expect(await section.getByTestId('team-mcp-error').textContent()).toBe(
      'The tool glob "echo" matches no tool of the team\'s servers: tools are named <server>__<tool>, so it names none.',
    );
    expect((await gw.admin('GET', '/admin/v1/teams/lab')).body.mcp.servers).toEqual([]);
    // Chromium logs the 400 the test asked for as an error; it is the only one.
    expect(session.errors.splice(0)).toEqual([
      'Failed to load resource: the server responded with a status of 400 (Bad Request)',
    ]);

    // A glob holding markup is valid (no space or comma) and shown as its characters.
    await globs.fill('remote__echo, remote__a*, remote__<b>x</b>');
    await save.click();
    await section.getByRole('status').getByText('MCP permissions saved.').waitFor();
    await section
      .getByTestId('team-mcp-tools')
      .getByText('remote__echo, remote__a*, remote__<b>x</b>')
      .waitFor();
    expect(await section.getByTestId('team-mcp-servers').textContent()).toBe('remote');
    expect(await section.locator('b').count()).toBe(0);
    expect((await gw.admin('GET', '/admin/v1/teams/lab')).body.mcp).toEqual({
      servers: ['remote'],
      tools: ['remote__echo', 'remote__a*', 'remote__<b>x</b>'],
    });
    // The same token, through /mcp: exactly the permitted tools (not delete_repo, nothing of the down server).
    expect(await toolsListed(token)).toEqual(['remote__add', 'remote__echo']);
    await shot(page, 'team-mcp');

    // Unticking every server takes all MCP access away.
    await remoteBox.uncheck();
    await save.click();
    await section.getByRole('status').getByText('MCP access removed.').waitFor();
    await section.getByText('This team reaches no MCP server.').waitFor();
    expect((await gw.admin('GET', '/admin/v1/teams/lab')).body.mcp).toEqual({ servers: [], tools: ['*'] });
    expect(await toolsListed(token)).toEqual([]);
  });

  it("shows a team-admin their team's MCP permissions read-only, and the API refuses them the change", async () => {
    expect(
      (
        await gw.admin('PATCH', '/admin/v1/teams/lab', {
          mcp: { servers: ['remote'], tools: ['remote__echo'] },
        })
      ).status,
    ).toBe(200);
    const session = await openConsoleBrowser(browser, gw.url);
    opened.push(session);
    await browserSignedIn(session.context, gw, { subject: 'lab-lead' }, [
      { kind: 'team-admin', team: 'lab' },
    ]);
    const { page } = session;
    await page.goto(`${gw.url}/console/#/teams/lab`);
    const section = page.getByTestId('team-mcp');
    await section.getByTestId('team-mcp-tools').getByText('remote__echo').waitFor();
    // Loaded alongside: the team's own settings a team-admin may change (their buttons are there).
    await page.getByRole('button', { name: 'Opt out of the response cache' }).waitFor();
    expect(await section.locator('summary, form, button, input').count()).toBe(0);
    // The page's own session, going round the page: refused, the permissions unchanged.
    const refused = await page.evaluate(async () => {
      const { csrf_token } = (await (await fetch('/console/api/session')).json()) as { csrf_token: string };
      const response = await fetch('/admin/v1/teams/lab', {
        method: 'PATCH',
        headers: { 'content-type': 'application/json', 'x-csrf-token': csrf_token },
        body: JSON.stringify({ mcp: { servers: ['remote'], tools: ['*'] } }),
      });
      return { status: response.status, error: ((await response.json()) as any).error };
    });
    expect(refused).toMatchObject({ status: 403, error: { code: 'permission_denied', param: 'mcp' } });
    expect((await gw.admin('GET', '/admin/v1/teams/lab')).body.mcp.tools).toEqual(['remote__echo']);
  });
});
