import { createServer, request as httpRequest, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { McpError } from '@modelcontextprotocol/sdk/types.js';
import { eventually, untilPast } from '../support/eventually';
import { RemoteMcpServer } from '../support/mcp-remote-server';
import { OpenAIUpstream } from '../support/openai-upstream';
import { startTestGateway, type TestGateway } from '../support/test-gateway';

const ECHO_SECRET = 'echoer-credential-0123456789';
const LEAKY_SECRET = 'leaky-credential-9876543210';
const STDIO_SECRET = 'stdio-credential-abcdefghij';
const QUERY_SECRET = 'querysecret123';
const SECRETS = [ECHO_SECRET, LEAKY_SECRET, STDIO_SECRET, QUERY_SECRET];
const STDIO_SERVER = join(__dirname, '../support/mcp-stdio-server.mjs');

/**
 * The MCP endpoint against servers that misbehave (docs/mcp.md): one that quotes the credential the gateway sent it
 * in its answers and errors, one that answers every request with an error body quoting it, and a local one that
 * prints its env on stderr. None of those credentials may leave the gateway.
 */
describe('MCP gateway, hardened', () => {
  let upstream: OpenAIUpstream;
  let echoer: RemoteMcpServer;
  let leaky: RemoteMcpServer;
  let stuck: RemoteMcpServer;
  let pager: RemoteMcpServer;
  let slowpoke: RemoteMcpServer;
  let gw: TestGateway;
  const open: Client[] = [];

  beforeAll(async () => {
    upstream = await new OpenAIUpstream().start();
    echoer = await new RemoteMcpServer({ token: ECHO_SECRET, echoTools: true }).start();
    leaky = await new RemoteMcpServer({ token: LEAKY_SECRET, behaviour: 'leaky' }).start();
    stuck = await new RemoteMcpServer({ token: 'stuck-token', behaviour: 'hang' }).start();
    pager = await new RemoteMcpServer({ token: 'pager-token', behaviour: 'endless-pages' }).start();
    slowpoke = await new RemoteMcpServer({ token: 'slowpoke-token', slowTool: true }).start();
    gw = await startTestGateway({
      upstreamUrl: upstream.url,
      env: {
        ECHO_TOKEN: ECHO_SECRET,
        ECHO_QUERY: QUERY_SECRET,
        LEAKY_TOKEN: LEAKY_SECRET,
        NOTES_TOKEN: STDIO_SECRET,
      },
      config: {
        server: { maxBodyBytes: 65_536 },
        mcp: {
          // Long enough for a test's steps on a loaded machine to end inside the first back-off.
          backoff: { initialMs: 3000, maxMs: 6000 },
          servers: {
            echoer: {
              url: `${echoer.url}?api_key=\${ECHO_QUERY}`,
              headers: { Authorization: 'Bearer ${ECHO_TOKEN}' },
              timeoutMs: 5000,
            },
            leaky: { url: leaky.url, headers: { Authorization: 'Bearer ${LEAKY_TOKEN}' }, timeoutMs: 5000 },
            stuck: { url: stuck.url, headers: { Authorization: 'Bearer stuck-token' }, timeoutMs: 500 },
            pager: { url: pager.url, headers: { Authorization: 'Bearer pager-token' }, timeoutMs: 5000 },
            slowpoke: {
              url: slowpoke.url,
              headers: { Authorization: 'Bearer slowpoke-token' },
              timeoutMs: 1000,
            },
            notes: {
              command: process.execPath,
              args: [STDIO_SERVER],
              env: { NOTES_TOKEN: '${NOTES_TOKEN}' },
              timeoutMs: 10_000,
            },
          },
        },
        teams: {
          circuit: { mcp: { servers: ['echoer', 'stuck'], tools: ['*'] } },
          paged: { mcp: { servers: ['echoer', 'pager'], tools: ['*'] } },
          slow: { mcp: { servers: ['slowpoke'], tools: ['*'] } },
          agents: {
            mcp: { servers: ['echoer', 'leaky', 'notes'], tools: ['*'] },
            logging: { content: 'full' },
          },
        },
      },
    });
  });

  afterAll(async () => {
    await Promise.all(open.map((client) => client.close()));
    await gw.close();
    await Promise.all([
      echoer.stop(),
      leaky.stop(),
      stuck.stop(),
      pager.stop(),
      slowpoke.stop(),
      upstream.stop(),
    ]);
  });

  async function tokenOf(team: string, body: object = {}): Promise<string> {
    const created = await gw.admin('POST', `/admin/v1/teams/${team}/tokens`, body);
    expect(created.status).toBe(201);
    return created.body.token as string;
  }

  async function connect(token: string, path = '/mcp'): Promise<Client> {
    const client = new Client({ name: 'e2e', version: '1.0.0' });
    await client.connect(
      new StreamableHTTPClientTransport(new URL(`${gw.url}${path}`), {
        requestInit: { headers: { authorization: `Bearer ${token}` } },
      }),
    );
    open.push(client);
    return client;
  }

  async function refusal(call: Promise<unknown>): Promise<McpError> {
    const error = await call.then(
      () => undefined,
      (thrown: unknown) => thrown,
    );
    expect(error).toBeInstanceOf(McpError);
    return error as McpError;
  }

  function expectNoSecret(text: string): void {
    for (const secret of SECRETS) expect(text).not.toContain(secret);
  }

  it("never lets a server's credential out: not in answers, MCP errors, last_error, the log or the request log", async () => {
    const client = await connect(await tokenOf('agents', { name: 'redaction' }));
    const { tools } = await client.listTools();
    expect(tools.map((tool) => tool.name)).toContain('notes__read_note');
    expect(tools.map((tool) => tool.name)).not.toContain(expect.stringMatching(/^leaky__/));

    const whoami = await client.callTool({ name: 'echoer__whoami', arguments: {} });
    expect(whoami.content).toEqual([{ type: 'text', text: 'you sent [mcp_credential]' }]);
    // A key in the server's url is its credential too.
    const whereami = await client.callTool({ name: 'echoer__whereami', arguments: {} });
    expect(whereami.content).toEqual([{ type: 'text', text: 'you called /mcp?api_key=[mcp_credential]' }]);
    const rejected = await refusal(client.callTool({ name: 'echoer__reject', arguments: {} }));
    expect(rejected.message).toContain('credential [mcp_credential] is not enough');
    expect(rejected.data).toEqual({ sent: '[mcp_credential]' });
    const down = await refusal(client.callTool({ name: 'leaky__anything', arguments: {} }));
    expectNoSecret(`${down.message} ${JSON.stringify(down.data)}`);

    const servers = await gw.admin('GET', '/admin/v1/mcp/servers');
    const leakyHealth = (servers.body.data as Array<Record<string, any>>).find((s) => s.id === 'leaky')!;
    expect(leakyHealth).toMatchObject({
      status: 'down',
      last_error: expect.stringMatching(/^unavailable: /),
    });
    expect(leakyHealth.last_error).toContain('[mcp_credential]');
    expect(leakyHealth.last_error.length).toBeLessThanOrEqual(520);
    expectNoSecret(JSON.stringify(servers.body));

    const entries = await eventually(async () => {
      const page = await gw.admin(
        'GET',
        '/admin/v1/requests?team=agents&endpoint=mcp.tools%2Fcall&limit=100',
      );
      const mine = (page.body.data as Array<Record<string, any>>).filter((e) => e.token.name === 'redaction');
      expect(mine).toHaveLength(4);
      return mine;
    }, 5000);
    for (const entry of entries)
      expectNoSecret(JSON.stringify((await gw.admin('GET', `/admin/v1/requests/${entry.id}`)).body));

    // The local server printed its token on stderr: the gateway logged the line, redacted.
    await eventually(() =>
      expect(gw.logs.some((line) => line.msg === 'MCP server stderr' && line.server === 'notes')).toBe(true),
    );
    expect(gw.logs.find((line) => line.msg === 'MCP server stderr')!.stderr).toContain('[mcp_credential]');
    expect(gw.logs.some((line) => line.msg === 'MCP server failed' && line.server === 'leaky')).toBe(true);
    expectNoSecret(gw.rawLogs.join('\n'));
  });

  it('says an MCP error message once (the SDK would prefix "MCP error <code>: " twice)', async () => {
    const client = await connect(await tokenOf('agents'));
    const forbidden = await refusal(client.callTool({ name: 'nowhere__echo', arguments: {} }));
    expect(forbidden.message).toBe(
      'MCP error -32602: Tool "nowhere__echo" is not available to this token (unknown, or not permitted for its team).',
    );
    const rejected = await refusal(client.callTool({ name: 'echoer__reject', arguments: {} }));
    expect(rejected.message).toBe('MCP error -32600: credential [mcp_credential] is not enough');
    const down = await refusal(client.callTool({ name: 'leaky__anything', arguments: {} }));
    expect(down.message).toMatch(/^MCP error -32603: MCP server "leaky" is /);
    expect(down.message).not.toMatch(/MCP error.*MCP error/);
  });

  it('answers a malformed POST with the JSON-RPC error and HTTP status the transport gives it, never a 500', async () => {
    const token = await tokenOf('agents');
    const post = (body: string, headers: Record<string, string>) =>
      fetch(`${gw.url}/mcp`, {
        method: 'POST',
        headers: {
          authorization: `Bearer ${token}`,
          'content-type': 'application/json',
          accept: 'application/json, text/event-stream',
          ...headers,
        },
        body,
      });
    const list = '{"jsonrpc":"2.0","id":1,"method":"tools/list"}';
    const cases: Array<[string, string, Record<string, string>, number, number]> = [
      ['not JSON', '{"jsonrpc": "2.0", "id": 1, "method": ', {}, 400, -32700],
      ['no body', '', {}, 400, -32700],
      ['a string', '"tools/list"', {}, 400, -32600],
      ['a number', '42', {}, 400, -32600],
      ['null', 'null', {}, 400, -32600],
      ['an empty object', '{}', {}, 400, -32600],
      ['no jsonrpc', '{"id":1,"method":"tools/list"}', {}, 400, -32600],
      ['no method', '{"jsonrpc":"2.0","id":1}', {}, 400, -32600],
      ['not JSON content', list, { 'content-type': 'text/plain' }, 415, -32000],
      ['not accepting event streams', list, { accept: 'application/json' }, 406, -32000],
      [
        'over server.maxBodyBytes',
        JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list', params: { pad: 'x'.repeat(70_000) } }),
        {},
        413,
        -32000,
      ],
    ];
    const answers = [];
    for (const [what, body, headers] of cases) {
      const answer = await post(body, headers);
      const json = (await answer.json()) as { jsonrpc: string; id: unknown; error: { code: number } };
      expect(answer.headers.get('content-type')).toContain('application/json');
      expect(json).toMatchObject({ jsonrpc: '2.0', id: null, error: { message: expect.any(String) } });
      answers.push([what, answer.status, json.error.code]);
    }
    expect(answers).toEqual(cases.map(([what, , , status, code]) => [what, status, code]));
    // A path the router cannot decode, an unknown server, a method the endpoint has not: JSON errors, not 500s.
    for (const [path, method] of [
      ['/mcp/%E0%A4%A', 'POST'],
      ['/mcp/nowhere', 'POST'],
      ['/mcp', 'PUT'],
      ['/mcp/echoer/deeper', 'POST'],
    ]) {
      const answer = await fetch(`${gw.url}${path}`, {
        method,
        headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
        body: list,
      });
      expect({ path, method, status: answer.status < 500, type: answer.headers.get('content-type') }).toEqual(
        {
          path,
          method,
          status: true,
          type: expect.stringContaining('application/json'),
        },
      );
    }
  });

  it('skips a server that failed for a back-off: lists do not ask it, calls to it fail at once, it shows down; then one probe', async () => {
    const token = await tokenOf('circuit');
    const client = await connect(token);
    const names = async () => (await client.listTools()).tools.map((tool) => tool.name);
    expect(await names()).toContain('echoer__echo');
    expect(stuck.lists).toBe(1);
    // The next lists neither ask it nor wait for its timeoutMs.
    for (let i = 0; i < 3; i++) expect(await names()).toContain('echoer__echo');
    expect(stuck.lists).toBe(1);
    // A call to it, and a list on its own endpoint, are MCP errors at once; it is not asked.
    const call = await refusal(client.callTool({ name: 'stuck__echo', arguments: { text: 'x' } }));
    expect(call.message).toMatch(
      /^MCP error -32603: MCP server "stuck" is down \(it failed; tried again in \d+ s\)\.$/,
    );
    expect(stuck.calls).toEqual([]);
    const alone = await connect(token, '/mcp/stuck');
    expect((await refusal(alone.listTools())).message).toContain('MCP server "stuck" is down');
    // Shown as down, with its last error and when it is tried again, in the admin API and the metrics.
    const servers = await gw.admin('GET', '/admin/v1/mcp/servers');
    const health = (servers.body.data as Array<Record<string, any>>).find((s) => s.id === 'stuck')!;
    expect(health).toMatchObject({
      status: 'down',
      last_error: expect.stringMatching(/^timeout: /),
      retry_at: expect.any(String),
    });
    expect(stuck.lists).toBe(1);
    const metrics = await (await fetch(`${gw.url}/metrics`)).text();
    expect(metrics).toContain('switchyard_mcp_server_up{server="stuck"} 0');
    expect(metrics).toContain('switchyard_mcp_server_up{server="echoer"} 1');
    // When the back-off is over, the admin page does not probe it (nor wait for it): it shows it as it was left.
    await untilPast(Date.parse(health.retry_at as string));
    const viewed = await gw.admin('GET', '/admin/v1/mcp/servers');
    expect((viewed.body.data as Array<Record<string, any>>).find((s) => s.id === 'stuck')).toMatchObject({
      status: 'down',
      retry_at: health.retry_at,
    });
    expect(stuck.lists).toBe(1);
    // One request (an agent's) probes it, however many lists ask at once.
    await Promise.all([names(), names(), names()]);
    expect(stuck.lists).toBe(2);
    // It failed again: skipped again (for twice as long).
    expect(await names()).toContain('echoer__echo');
    expect(stuck.lists).toBe(2);
  });

  it('a local server that exited is started again by the next request, which it answers (not an error)', async () => {
    const client = await connect(await tokenOf('agents'));
    const pids = new Set<number>();
    for (let round = 0; round < 3; round++) {
      const crashed = await client.callTool({ name: 'notes__crash', arguments: {} });
      const pid = Number(/pid (\d+)/.exec(JSON.stringify(crashed.content))![1]);
      // At once: the process is gone, or going; the gateway starts another and sends the call there.
      const read = await client.callTool({
        name: 'notes__read_note',
        arguments: { title: `after ${round}` },
      });
      expect(read.isError).toBeFalsy();
      const after = (read.structuredContent as { pid: number }).pid;
      expect(after).not.toBe(pid);
      pids.add(pid).add(after);
    }
    expect(pids.size).toBe(4);
    // A list right after it exits is sent again on a fresh connection (a list changes nothing): answered, not an error.
    const alone = await connect(await tokenOf('agents'), '/mcp/notes');
    for (let round = 0; round < 3; round++) {
      await client.callTool({ name: 'notes__crash', arguments: {} });
      expect((await alone.listTools()).tools.map((tool) => tool.name)).toContain('read_note');
    }
  });

  it("a call that times out is that call's failure: the server stays up for the next call, its lists and the page", async () => {
    const client = await connect(await tokenOf('slow'));
    const slow = await refusal(client.callTool({ name: 'slowpoke__slow', arguments: {} }));
    expect(slow).toMatchObject({ code: -32001 });
    expect(slow.message).toContain('MCP server "slowpoke" did not answer in time');
    // At once: the next call reaches it and is answered (no back-off), and so is a list.
    const echoed = await client.callTool({ name: 'slowpoke__echo', arguments: { text: 'still here' } });
    expect(echoed.content).toEqual([{ type: 'text', text: 'still here' }]);
    expect((await client.listTools()).tools.map((tool) => tool.name)).toContain('slowpoke__echo');
    const servers = await gw.admin('GET', '/admin/v1/mcp/servers');
    expect((servers.body.data as Array<Record<string, any>>).find((s) => s.id === 'slowpoke')).toMatchObject({
      status: 'up',
      last_error: null,
      retry_at: null,
    });
    const metrics = await (await fetch(`${gw.url}/metrics`)).text();
    expect(metrics).toContain('switchyard_mcp_server_up{server="slowpoke"} 1');
    expect(metrics).not.toMatch(/switchyard_mcp_server_errors_total\{[^}]*server="slowpoke"/);
  });

  it('a server whose tools/list pages without end: cut off after 20 pages, its list an MCP error, the server still up', async () => {
    const token = await tokenOf('paged');
    const all = await connect(token);
    const before = pager.lists;
    // On /mcp its tools are left out (20 pages asked, not one more); the others are listed.
    const listed = (await all.listTools()).tools.map((tool) => tool.name);
    expect(listed).toContain('echoer__echo');
    expect(listed.filter((name) => name.startsWith('pager__'))).toEqual([]);
    expect(pager.lists - before).toBe(20);
    // On /mcp/pager the list is the client's MCP error, and a call still reaches it (it answered: not skipped).
    const alone = await connect(token, '/mcp/pager');
    expect((await refusal(alone.listTools())).message).toContain(
      'MCP server "pager" lists more than 20 pages',
    );
    expect(pager.calls).toEqual([]);
    expect(await refusal(alone.callTool({ name: 'nothing', arguments: {} }))).toMatchObject({ code: -32602 });
    expect(pager.calls).toEqual([{ name: 'nothing', arguments: {} }]);
  });

  it('refuses JSON-RPC batches (removed from MCP in 2025-06-18): nothing in one is served, listed or called', async () => {
    const token = await tokenOf('agents');
    const [listsBefore, callsBefore] = [echoer.lists, echoer.calls.length];
    const message = (id: number, method: string, params?: object) => ({ jsonrpc: '2.0', id, method, params });
    for (const protocolVersion of ['2025-11-25', '2025-06-18', '2025-03-26']) {
      const answer = await fetch(`${gw.url}/mcp`, {
        method: 'POST',
        headers: {
          authorization: `Bearer ${token}`,
          'content-type': 'application/json',
          accept: 'application/json, text/event-stream',
          'mcp-protocol-version': protocolVersion,
        },
        body: JSON.stringify([
          ...Array.from({ length: 50 }, (_, i) => message(i, 'tools/list')),
          message(50, 'tools/call', { name: 'echoer__echo', arguments: { text: 'batched' } }),
        ]),
      });
      expect(answer.status).toBe(400);
      expect(await answer.json()).toEqual({
        jsonrpc: '2.0',
        id: null,
        error: { code: -32600, message: expect.stringContaining('JSON-RPC batches are not accepted') },
      });
    }
    expect([echoer.lists, echoer.calls.length]).toEqual([listsBefore, callsBefore]);
  });
});

const PROXIED_TOKEN = 'proxied-remote-token-123456';

/**
 * A remote server behind a reverse proxy that answers 504 for one slow call (its own read timeout shorter than the
 * server's timeoutMs), as nginx does: that call's failure alone, not the server's (no back-off for every team).
 */
describe('MCP gateway, hardened: a remote server behind a proxy', () => {
  let upstream: OpenAIUpstream;
  let remote: RemoteMcpServer;
  let proxy: Server;
  let gw: TestGateway;

  beforeAll(async () => {
    upstream = await new OpenAIUpstream().start();
    remote = await new RemoteMcpServer({ token: PROXIED_TOKEN }).start();
    const target = new URL(remote.url);
    proxy = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        const body = Buffer.concat(chunks);
        if (body.includes('"tools/call"') && body.includes('gateway-timeout-please')) {
          res.writeHead(504, { 'content-type': 'text/html' }).end('<html>504 Gateway Time-out</html>');
          return;
        }
        const out = httpRequest(
          {
            host: target.hostname,
            port: target.port,
            path: req.url,
            method: req.method,
            headers: req.headers,
          },
          (answer) => {
            res.writeHead(answer.statusCode ?? 502, answer.headers);
            answer.pipe(res);
          },
        );
        out.end(body);
      });
    });
    await new Promise<void>((resolve) => proxy.listen(0, '127.0.0.1', resolve));
    const port = (proxy.address() as AddressInfo).port;
    gw = await startTestGateway({
      upstreamUrl: upstream.url,
      config: {
        mcp: {
          backoff: { initialMs: 30_000, maxMs: 60_000 },
          servers: {
            shared: {
              url: `http://127.0.0.1:${port}${target.pathname}`,
              headers: { Authorization: `Bearer ${PROXIED_TOKEN}` },
              timeoutMs: 5000,
            },
          },
        },
        teams: {
          a: { mcp: { servers: ['shared'], tools: ['*'] } },
          b: { mcp: { servers: ['shared'], tools: ['shared__echo'] } },
        },
      },
    });
  });
  afterAll(async () => {
    await gw.close();
    await new Promise((resolve) => proxy.close(resolve));
    await Promise.all([remote.stop(), upstream.stop()]);
  });

  async function call(team: string, text: string) {
    return ask(team, 'tools/call', { name: 'shared__echo', arguments: { text } });
  }

  async function ask(team: string, method: string, params: object) {
    const created = await gw.admin('POST', `/admin/v1/teams/${team}/tokens`, {});
    const res = await fetch(`${gw.url}/mcp`, {
      method: 'POST',
      headers: {
        authorization: `Bearer ${created.body.token}`,
        'content-type': 'application/json',
        accept: 'application/json, text/event-stream',
        'mcp-protocol-version': '2025-11-25',
      },
      body: JSON.stringify({
        jsonrpc: '2.0',
        id: 1,
        method,
        params,
      }),
    });
    return res.text();
  }

  it("team a's one call answered 504 does not take the server from team b", async () => {
    expect(await call('b', 'hello')).toContain('hello');
    expect(await call('a', 'gateway-timeout-please')).toContain('failed this request');
    expect(await call('b', 'hello again')).toContain('hello again');
  });

  it("many teams' rapid lists reach the server once (mcp.listCacheMs), each team still sees only its own tools", async () => {
    const before = remote.lists;
    const answers = await Promise.all(
      Array.from({ length: 10 }, (_, i) => ask(i % 2 ? 'a' : 'b', 'tools/list', {})),
    );
    answers.push(await ask('a', 'tools/list', {}), await ask('b', 'tools/list', {}));
    expect(remote.lists - before).toBeLessThanOrEqual(1);
    for (const [i, answer] of answers.entries()) {
      expect(answer).toContain('shared__echo');
      if (i % 2 === 0 && i < 10) expect(answer).not.toContain('shared__add');
    }
    expect(answers[1]).toContain('shared__add');
    expect(answers[11]).not.toContain('shared__add');
  });
});
