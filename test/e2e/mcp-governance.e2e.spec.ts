import { join } from 'node:path';
import { Client, ProtocolError, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import type { Browser, Page } from 'playwright-core';
import { launchChromium } from '../support/browser';
import {
  closeCheckedSessions,
  openConsoleBrowser,
  shot,
  signInWithoutForm,
  type ConsoleBrowser,
} from '../support/console-browser';
import { eventually, untilPast } from '../support/eventually';
import { RemoteMcpServer } from '../support/mcp-remote-server';
import { OpenAIUpstream } from '../support/openai-upstream';
import { ADMIN_KEY, startTestGateway, type TestGateway } from '../support/test-gateway';

const REMOTE_TOKEN = 'remote-server-credential';
const STDIO_SERVER = join(__dirname, '../support/mcp-stdio-server.mjs');
/** How long the remote server's `slow` tool takes: far past when the test's client leaves. */
const SLOW_MS = 8000;

type Entry = Record<string, any>;

/** Keeps a per-minute test inside one minute (the window is the clock's, so the clock is the condition). */
async function awayFromMinuteEdge(): Promise<void> {
  const intoMinute = Date.now() % 60_000;
  if (intoMinute > 50_000) await untilPast(Date.now() - intoMinute + 60_500);
}

/** A tools/call as a client without an SDK sends it, in either era (2026-07-28: the `_meta` envelope and headers). */
function toolCall(era: 'modern' | 'legacy', name: string): { body: object; headers: Record<string, string> } {
  const params = { name, arguments: {} };
  if (era === 'legacy') return { body: { jsonrpc: '2.0', id: 1, method: 'tools/call', params }, headers: {} };
  return {
    body: {
      jsonrpc: '2.0',
      id: 1,
      method: 'tools/call',
      params: {
        ...params,
        _meta: {
          'io.modelcontextprotocol/protocolVersion': '2026-07-28',
          'io.modelcontextprotocol/clientCapabilities': {},
          'io.modelcontextprotocol/clientInfo': { name: 'raw', version: '1' },
        },
      },
    },
    headers: { 'mcp-protocol-version': '2026-07-28', 'mcp-method': 'tools/call', 'mcp-name': name },
  };
}

/**
 * MCP governed like models (docs/mcp.md, Limits, Audit, Metrics): a client that leaves mid call is recorded as
 * having left, not as the server failing; prompts/get and resources/read are logged and counted like tool calls and
 * count against toolCallsPerMinute; the console's Requests page shows MCP entries as what they are.
 */
describe('MCP governed like models', () => {
  jest.setTimeout(120_000);
  let upstream: OpenAIUpstream;
  let remote: RemoteMcpServer;
  /** Its resource lists take SLOW_MS: a read on /mcp waits for them to find the URI's server. */
  let lagging: RemoteMcpServer;
  let gw: TestGateway;
  let browser: Browser | undefined;
  const open: Client[] = [];
  const opened: ConsoleBrowser[] = [];

  beforeAll(async () => {
    upstream = await new OpenAIUpstream().start();
    remote = await new RemoteMcpServer({ token: REMOTE_TOKEN, slowMs: SLOW_MS }).start();
    lagging = await new RemoteMcpServer({ token: REMOTE_TOKEN, resourceListMs: SLOW_MS }).start();
    gw = await startTestGateway({
      upstreamUrl: upstream.url,
      env: { MCP_REMOTE_TOKEN: REMOTE_TOKEN },
      config: {
        mcp: {
          servers: {
            remote: {
              url: remote.url,
              headers: { Authorization: 'Bearer ${MCP_REMOTE_TOKEN}' },
              timeoutMs: 20_000,
            },
            notes: { command: process.execPath, args: [STDIO_SERVER], timeoutMs: 10_000 },
            lagging: {
              url: lagging.url,
              headers: { Authorization: 'Bearer ${MCP_REMOTE_TOKEN}' },
              timeoutMs: 20_000,
            },
          },
        },
        teams: {
          builders: { mcp: { servers: ['remote', 'notes'] }, logging: { content: 'full' } },
          quiet: { mcp: { servers: ['remote', 'notes'] } },
          metered: { mcp: { servers: ['remote', 'notes'] }, limits: { toolCallsPerMinute: 3 } },
          scanners: { mcp: { servers: ['remote', 'notes'] }, limits: { toolCallsPerMinute: 2 } },
          laggards: { mcp: { servers: ['lagging'] } },
        },
      },
    });
  });

  afterAll(async () => {
    await browser?.close();
    await Promise.all(open.map((client) => client.close()));
    await gw.close();
    await Promise.all([remote.stop(), lagging.stop(), upstream.stop()]);
  });

  afterEach(() => closeCheckedSessions(opened, { adminKey: ADMIN_KEY, upstreamKey: 'upstream-secret-key' }));

  async function tokenOf(team: string, body: object = {}): Promise<string> {
    const created = await gw.admin('POST', `/admin/v1/teams/${team}/tokens`, body);
    expect(created.status).toBe(201);
    return created.body.token as string;
  }

  async function connect(token: string): Promise<Client> {
    const client = new Client({ name: 'e2e', version: '1.0.0' }, { versionNegotiation: { mode: 'auto' } });
    await client.connect(
      new StreamableHTTPClientTransport(new URL(`${gw.url}/mcp`), {
        requestInit: { headers: { authorization: `Bearer ${token}` } },
      }),
    );
    open.push(client);
    return client;
  }

  async function refusal(call: Promise<unknown>): Promise<ProtocolError> {
    const error = await call.then(
      () => undefined,
      (thrown: unknown) => thrown,
    );
    expect(error).toBeInstanceOf(ProtocolError);
    return error as ProtocolError;
  }

  /** The request log's entries of one token (by its name), waiting until there are `count`. */
  async function entriesOf(team: string, tokenName: string, count: number): Promise<Entry[]> {
    return eventually(async () => {
      const page = await gw.admin('GET', `/admin/v1/requests?team=${team}&limit=1000`);
      const mine = (page.body.data as Entry[]).filter((entry) => entry.token.name === tokenName);
      expect(mine).toHaveLength(count);
      return mine;
    }, 10_000);
  }

  const metrics = async () => (await fetch(`${gw.url}/metrics`)).text();

  it.each(['legacy', 'modern'] as const)(
    'a client that leaves mid tool call (%s era) is recorded as having left (499, aborted), not as the server failing',
    async (era) => {
      const tokenName = `leaver-${era}`;
      const token = await tokenOf('quiet', { name: tokenName });
      const callsBefore = remote.calls.length;
      const leaving = new AbortController();
      const request = toolCall(era, 'remote__slow');
      const pending = fetch(`${gw.url}/mcp`, {
        method: 'POST',
        headers: {
          authorization: `Bearer ${token}`,
          'content-type': 'application/json',
          accept: 'application/json, text/event-stream',
          ...request.headers,
        },
        body: JSON.stringify(request.body),
        signal: leaving.signal,
      }).catch((error: unknown) => error);
      // The call reached the server; then the client hangs up (as `curl --max-time` does).
      await eventually(() => expect(remote.calls.length).toBe(callsBefore + 1), 10_000);
      leaving.abort();
      expect(((await pending) as Error).name).toBe('AbortError');
      const [entry] = await entriesOf('quiet', tokenName, 1);
      expect(entry).toMatchObject({
        endpoint: 'mcp.tools/call',
        model: 'remote__slow',
        deployment: 'remote/slow',
        status: 499,
        outcome: 'aborted',
        errorCode: null,
      });
      // Recorded at once, not when the server would have answered.
      expect(entry.latencyMs).toBeLessThan(SLOW_MS);
      const counted = await metrics();
      expect(counted).toMatch(
        /switchyard_mcp_calls_total\{team="quiet",server="remote",tool="[^"]+",outcome="aborted"\} [1-9]/,
      );
      expect(counted).not.toMatch(/switchyard_mcp_calls_total\{team="quiet",[^}]*outcome="error"\}/);
      // Not the server's failure: not marked down, and nothing is logged as its failure.
      expect(counted).not.toContain('switchyard_mcp_server_up{server="remote"} 0');
      expect(gw.logs.filter((line) => (line.level as number) >= 40 && line.server === 'remote')).toEqual([]);
    },
  );

  it('a client that leaves while a resource read looks for its server is recorded as having left, not as refused', async () => {
    const token = await tokenOf('laggards', { name: 'lagging-reader' });
    const listsBefore = lagging.resourceLists;
    const leaving = new AbortController();
    const pending = fetch(`${gw.url}/mcp`, {
      method: 'POST',
      headers: {
        authorization: `Bearer ${token}`,
        'content-type': 'application/json',
        accept: 'application/json, text/event-stream',
      },
      body: JSON.stringify({
        jsonrpc: '2.0',
        id: 1,
        method: 'resources/read',
        params: { uri: 'memo://readme' },
      }),
      signal: leaving.signal,
    }).catch((error: unknown) => error);
    await eventually(() => expect(lagging.resourceLists).toBeGreaterThan(listsBefore), 10_000);
    leaving.abort();
    expect(((await pending) as Error).name).toBe('AbortError');
    const [entry] = await entriesOf('laggards', 'lagging-reader', 1);
    expect(entry).toMatchObject({
      endpoint: 'mcp.resources/read',
      model: 'memo://readme',
      status: 499,
      outcome: 'aborted',
      errorCode: null,
    });
    expect(lagging.reads).toEqual([]);
  });

  it('prompts/get and resources/read are in the request log like tool calls (content where kept, redacted) and counted', async () => {
    const client = await connect(await tokenOf('builders', { name: 'reader' }));
    const prompt = await client.getPrompt({
      name: 'notes__summarise',
      arguments: { title: 'mail bob@example.com' },
    });
    expect(prompt.messages).toHaveLength(1);
    expect((await client.readResource({ uri: 'memo://readme' })).contents).toHaveLength(1);
    // Read through the server's template, with an address in its URI: redacted where the log shows the URI.
    expect((await client.readResource({ uri: 'memo://notes/ann@example.com' })).contents).toHaveLength(1);
    await refusal(client.readResource({ uri: 'other://secret' }));
    await refusal(client.getPrompt({ name: 'nowhere__summarise', arguments: {} }));
    const entries = await entriesOf('builders', 'reader', 5);
    const byModel = Object.fromEntries(entries.map((entry) => [entry.model, entry]));
    expect(byModel['notes__summarise']).toMatchObject({
      endpoint: 'mcp.prompts/get',
      deployment: 'notes/summarise',
      status: 200,
      outcome: 'ok',
      errorCode: null,
      contentKept: true,
    });
    expect(byModel['memo://readme']).toMatchObject({
      endpoint: 'mcp.resources/read',
      deployment: 'remote',
      status: 200,
      outcome: 'ok',
    });
    expect(byModel['memo://notes/[email]']).toMatchObject({ endpoint: 'mcp.resources/read', status: 200 });
    expect(JSON.stringify(entries)).not.toContain('ann@example.com');
    expect(byModel['other://secret']).toMatchObject({
      endpoint: 'mcp.resources/read',
      deployment: null,
      status: 403,
      outcome: 'rejected',
      errorCode: 'resource_not_permitted',
    });
    expect(byModel['(none)__nowhere__summarise']).toMatchObject({
      endpoint: 'mcp.prompts/get',
      status: 403,
      errorCode: 'prompt_not_permitted',
    });
    // Filtered like tool calls.
    const reads = await gw.admin('GET', '/admin/v1/requests?team=builders&endpoint=mcp.resources%2Fread');
    expect((reads.body.data as Entry[]).filter((entry) => entry.token.name === 'reader')).toHaveLength(3);
    // Content: the prompt's arguments and its messages, redacted; the read's URI and contents.
    const got = (await gw.admin('GET', `/admin/v1/requests/${byModel['notes__summarise'].id}`)).body.content;
    expect(got.request).toEqual({ title: 'mail [email]' });
    expect(JSON.stringify(got.response)).toContain('Summarise the note \\"mail [email]\\"');
    const read = (await gw.admin('GET', `/admin/v1/requests/${byModel['memo://readme'].id}`)).body.content;
    expect(read.request).toEqual({ uri: 'memo://readme' });
    expect(read.response).toMatchObject({ contents: [{ text: 'Read me first.' }] });
    // Counted with a bounded tool label: never the prompt's name or the URI.
    const counted = await metrics();
    expect(counted).toMatch(
      /switchyard_mcp_calls_total\{team="builders",server="notes",tool="\(prompt\)",outcome="ok"\} 1/,
    );
    expect(counted).toMatch(
      /switchyard_mcp_calls_total\{team="builders",server="remote",tool="\(resource\)",outcome="ok"\} 2/,
    );
    expect(counted).toMatch(
      /switchyard_mcp_calls_total\{team="builders",server="\(none\)",tool="\(resource\)",outcome="refused"\} 1/,
    );
    expect(counted).not.toContain('memo://');
  });

  it('toolCallsPerMinute counts prompts/get and resources/read with tool calls; lists are not counted', async () => {
    await awayFromMinuteEdge();
    const client = await connect(await tokenOf('metered', { name: 'metered' }));
    await client.callTool({ name: 'remote__echo', arguments: { text: 'one' } });
    await client.getPrompt({ name: 'notes__summarise', arguments: { title: 'two' } });
    await client.readResource({ uri: 'memo://readme' });
    const readsBefore = remote.reads.length;
    for (const over of [
      client.readResource({ uri: 'memo://readme' }),
      client.getPrompt({ name: 'notes__summarise', arguments: { title: 'four' } }),
      client.callTool({ name: 'remote__echo', arguments: { text: 'five' } }),
    ]) {
      const limited = await refusal(over);
      expect(limited.code).toBe(-32010);
      expect(limited.data).toMatchObject({ code: 'rate_limit_exceeded' });
    }
    expect(remote.reads.length).toBe(readsBefore);
    // Lists are answered still, and count nothing.
    expect((await client.listTools()).tools.length).toBeGreaterThan(0);
    expect((await client.listResources()).resources).toHaveLength(1);
    expect((await client.listPrompts()).prompts).toHaveLength(1);
    const entries = await entriesOf('metered', 'metered', 6);
    expect(
      entries
        .filter((entry) => entry.status === 429)
        .map((entry) => entry.endpoint)
        .sort(),
    ).toEqual(['mcp.prompts/get', 'mcp.resources/read', 'mcp.tools/call']);
    expect(await metrics()).toContain(
      'switchyard_limit_rejections_total{team="metered",limit="toolCallsPerMinute"} 3',
    );
  });

  it('a resources/read of a URI no server has counts against toolCallsPerMinute (finding that out asks every server), once', async () => {
    await awayFromMinuteEdge();
    const client = await connect(await tokenOf('scanners', { name: 'scanner' }));
    for (const uri of ['memo://nowhere/1', 'memo://nowhere/2'])
      expect((await refusal(client.readResource({ uri }))).code).toBe(-32602);
    const limited = await refusal(client.readResource({ uri: 'memo://nowhere/3' }));
    expect(limited.code).toBe(-32010);
    expect(limited.data).toMatchObject({ code: 'rate_limit_exceeded' });
    // One entry each: the two refused reads as refused, the third as limited.
    const entries = await entriesOf('scanners', 'scanner', 3);
    expect(entries.map((entry) => `${entry.endpoint} ${entry.status}`).sort()).toEqual([
      'mcp.resources/read 403',
      'mcp.resources/read 403',
      'mcp.resources/read 429',
    ]);
  });

  describe("on the console's Requests page", () => {
    const rows = (page: Page) => page.locator('[data-testid=requests] tbody tr[data-request]');
    /** The text of one column of the table's rows (3: endpoint, 4: model or tool, 5: status, 8: tokens, 9: cost). */
    const column = (page: Page, i: number) =>
      rows(page).evaluateAll((trs, i) => trs.map((tr) => (tr as any).cells[i].textContent as string), i);

    it('filters by the MCP endpoints and shows MCP rows as what they are: the tool, its status, no tokens or cost', async () => {
      browser = await launchChromium();
      // One limited tool call (429) beside the metered team's others.
      const session = await openConsoleBrowser(browser, gw.url);
      opened.push(session);
      await signInWithoutForm(session, gw.url, ADMIN_KEY, 'alice');
      const { page } = session;
      await page.goto(`${gw.url}/console/#/requests`);
      await rows(page).first().waitFor();
      expect(await page.getByLabel('Endpoint').locator('option').allTextContents()).toEqual(
        expect.arrayContaining(['mcp.tools/call', 'mcp.prompts/get', 'mcp.resources/read']),
      );
      await page.getByLabel('Team').selectOption('metered');
      await page.getByLabel('Endpoint').selectOption('mcp.tools/call');
      await page.getByRole('button', { name: 'Filter' }).click();
      await eventually(async () => expect(await rows(page).count()).toBe(2), 10_000);
      expect(await column(page, 3)).toEqual(['mcp.tools/call', 'mcp.tools/call']);
      // Newest first: the limited call, then the one answered; each names its tool, never "→ none".
      expect(await column(page, 4)).toEqual(['remote__echo', 'remote__echo']);
      expect(await column(page, 5)).toEqual(['429 rate_limit_exceeded', '200']);
      expect(await column(page, 8)).toEqual(['-', '-']);
      expect(await column(page, 9)).toEqual(['-', '-']);
      await shot(page, 'requests-mcp');

      // Its page: the tool and its server, no usage, cost or attempts.
      await rows(page).nth(1).locator('td a').click();
      const fields = page.getByTestId('request-fields');
      await fields.waitFor();
      const text = await fields.textContent();
      expect(text).toContain('Toolremote__echo');
      expect(text).toContain('MCP serverremote');
      expect(text).not.toContain('Deployment');
      expect(await page.getByTestId('request-usage').count()).toBe(0);
      expect(await page.getByTestId('attempts').count()).toBe(0);
      expect(await page.locator('main').textContent()).not.toContain('$0');

      // A resource read names its URI and server.
      await page.goto(`${gw.url}/console/#/requests`);
      await page.getByLabel('Team').selectOption('builders');
      await page.getByLabel('Endpoint').selectOption('mcp.resources/read');
      await page.getByRole('button', { name: 'Filter' }).click();
      await eventually(async () => expect(await rows(page).count()).toBe(3), 10_000);
      expect(new Set(await column(page, 4))).toEqual(
        new Set(['other://secret', 'memo://notes/[email]', 'memo://readme']),
      );
      expect(await column(page, 5)).toContain('403 resource_not_permitted');
    });
  });
});
