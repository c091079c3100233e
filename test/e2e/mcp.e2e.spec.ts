import { request as httpRequest } from 'node:http';
import { join } from 'node:path';
import {
  Client,
  ProtocolError,
  ProtocolErrorCode,
  SdkHttpError,
  StreamableHTTPClientTransport,
} from '@modelcontextprotocol/client';
import { Client as ClientV1 } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport as StreamableHTTPClientTransportV1 } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { signedIn } from '../support/admin-actors';
import { eventually, untilPast } from '../support/eventually';
import { freePort } from '../support/free-port';
import { ModernMcpServer } from '../support/mcp-modern-server';
import { RemoteMcpServer } from '../support/mcp-remote-server';
import { OpenAIUpstream } from '../support/openai-upstream';
import { startTestGateway, type TestGateway } from '../support/test-gateway';

const REMOTE_TOKEN = 'remote-server-credential';
const STDIO_SERVER = join(__dirname, '../support/mcp-stdio-server.mjs');
const STDIO_MODERN_SERVER = join(__dirname, '../support/mcp-stdio-modern-server.mjs');

/** Keeps a per-minute test inside one minute (the window is the clock's, so the clock is the condition). */
async function awayFromMinuteEdge(): Promise<void> {
  const intoMinute = Date.now() % 60_000;
  if (intoMinute > 55_000) await untilPast(Date.now() - intoMinute + 60_500);
}

/** A 2025-era tools/list as a client without an SDK sends it (no `_meta` envelope: the 2025 revisions). */
const listTools = { body: { jsonrpc: '2.0', id: 1, method: 'tools/list' } };

/**
 * A 2026-07-28 request as a client without an SDK sends it: the `_meta` envelope in the body, the revision, method
 * and name in headers too (intermediaries route on those).
 */
function modernRequest(
  id: number,
  method: string,
  params: Record<string, unknown> = {},
  protocolVersion = '2026-07-28',
): { body: object; headers: Record<string, string> } {
  return {
    body: {
      jsonrpc: '2.0',
      id,
      method,
      params: {
        ...params,
        _meta: {
          'io.modelcontextprotocol/protocolVersion': protocolVersion,
          'io.modelcontextprotocol/clientCapabilities': {},
          'io.modelcontextprotocol/clientInfo': { name: 'raw', version: '1' },
        },
      },
    },
    headers: {
      'mcp-protocol-version': protocolVersion,
      'mcp-method': method,
      ...(typeof params.name === 'string' ? { 'mcp-name': params.name } : {}),
    },
  };
}

/** A 2025-era initialize as a client without an SDK sends it. */
function initialize(protocolVersion: string): { body: object } {
  return {
    body: {
      jsonrpc: '2.0',
      id: 1,
      method: 'initialize',
      params: { protocolVersion, capabilities: {}, clientInfo: { name: 'raw', version: '1' } },
    },
  };
}

/**
 * A fetch for an SDK client's transport that sends each request to the next of `replicas` in turn (as a load
 * balancer without stickiness would), noting in `served` which one took it.
 */
function alternating(replicas: TestGateway[], served: string[]): typeof fetch {
  let next = 0;
  return (input, init) => {
    const to = replicas[next++ % replicas.length].url;
    served.push(to);
    const url = String(input instanceof Request ? input.url : input).replace(replicas[0].url, to);
    return fetch(url, init);
  };
}

/** The JSON-RPC code of a call to a server that did not answer in its timeoutMs (docs/mcp.md). */
const UPSTREAM_TIMEOUT = -32001;

/**
 * How the client speaks: the 2026-07-28 revision (pinned: no initialize, the `_meta` envelope on every request,
 * server/discover), or the 2025 era (the initialize handshake, 2025-11-25), both with the official v2 client.
 */
const ERAS = [
  { era: 'modern', revision: '2026-07-28' },
  { era: 'legacy', revision: '2025-11-25' },
] as const;

/**
 * Tools through the gateway (docs/mcp.md): the official MCP SDK's Client against /mcp, in front of stand-in servers
 * built with the 1.x SDK (2025-era servers, as most deployed ones are): a remote one (Streamable HTTP, checking the
 * credential the gateway holds for it), a local one the gateway starts (stdio), one that is down (nothing listens)
 * and one that is stuck (never answers). Every test runs once for each protocol era the client may speak.
 */
describe.each(ERAS)('MCP gateway, client on $revision', ({ era, revision }) => {
  let upstream: OpenAIUpstream;
  let remote: RemoteMcpServer;
  let stuck: RemoteMcpServer;
  let gw: TestGateway;
  let options: Parameters<typeof startTestGateway>[0];
  const open: Client[] = [];

  beforeAll(async () => {
    // A secret of the gateway's process that a local server must not see (only its configured env reaches it).
    process.env.MCP_GATEWAY_SECRET = 'never-for-tools';
    upstream = await new OpenAIUpstream().start();
    remote = await new RemoteMcpServer({ token: REMOTE_TOKEN }).start();
    stuck = await new RemoteMcpServer({ token: REMOTE_TOKEN, behaviour: 'hang' }).start();
    const downPort = await freePort();
    options = {
      upstreamUrl: upstream.url,
      env: { MCP_REMOTE_TOKEN: REMOTE_TOKEN },
      config: {
        mcp: {
          servers: {
            remote: {
              url: remote.url,
              headers: { Authorization: 'Bearer ${MCP_REMOTE_TOKEN}' },
              timeoutMs: 5000,
            },
            notes: {
              command: process.execPath,
              args: [STDIO_SERVER],
              env: { NOTES_OWNER: 'ada' },
              timeoutMs: 10_000,
            },
            down: { url: `http://127.0.0.1:${downPort}/mcp`, timeoutMs: 5000 },
            stuck: {
              url: stuck.url,
              headers: { Authorization: 'Bearer ${MCP_REMOTE_TOKEN}' },
              timeoutMs: 500,
            },
          },
        },
        teams: {
          builders: {
            mcp: {
              servers: ['remote', 'notes', 'down', 'stuck'],
              tools: ['remote__echo', 'remote__add', 'notes__*', 'down__*', 'stuck__*'],
            },
            logging: { content: 'full' },
          },
          outsiders: {},
          metered: { mcp: { servers: ['remote'], tools: ['*'] }, limits: { toolCallsPerMinute: 2 } },
          'metered-twice': { mcp: { servers: ['remote'], tools: ['*'] }, limits: { toolCallsPerMinute: 3 } },
        },
      },
    };
    gw = await startTestGateway(options);
  });

  afterAll(async () => {
    await Promise.all(open.map((client) => client.close()));
    await gw.close();
    await Promise.all([remote.stop(), stuck.stop(), upstream.stop()]);
    delete process.env.MCP_GATEWAY_SECRET;
  });

  async function tokenOf(team: string, body: object = {}): Promise<string> {
    const created = await gw.admin('POST', `/admin/v1/teams/${team}/tokens`, body);
    expect(created.status).toBe(201);
    return created.body.token as string;
  }

  /** The official client, connected to `path` with a team token (as Bearer, or as x-api-key). */
  async function connect(
    token: string,
    path = '/mcp',
    header: 'bearer' | 'x-api-key' = 'bearer',
    on: TestGateway = gw,
  ): Promise<Client> {
    const client = new Client(
      { name: 'e2e', version: '1.0.0' },
      era === 'modern' ? { versionNegotiation: { mode: { pin: revision } } } : {},
    );
    const headers: Record<string, string> =
      header === 'bearer' ? { authorization: `Bearer ${token}` } : { 'x-api-key': token };
    await client.connect(
      new StreamableHTTPClientTransport(new URL(`${on.url}${path}`), { requestInit: { headers } }),
    );
    open.push(client);
    // The era the client asked for is the one the gateway served.
    expect(client.getProtocolEra()).toBe(era);
    expect(client.getNegotiatedProtocolVersion()).toBe(revision);
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

  /** A JSON-RPC POST as a client without an SDK sends it: `token` as Bearer, `headers` beside the usual ones. */
  function rawPost(
    path: string,
    token: string | undefined,
    request: { body: object; headers?: Record<string, string> },
  ): Promise<Response> {
    return fetch(`${gw.url}${path}`, {
      method: 'POST',
      headers: {
        ...(token ? { authorization: `Bearer ${token}` } : {}),
        'content-type': 'application/json',
        accept: 'application/json, text/event-stream',
        ...request.headers,
      },
      body: JSON.stringify(request.body),
    });
  }

  it('lists only the permitted tools of the reachable servers, named <server>__<tool>; a down and a stuck server are left out', async () => {
    const client = await connect(await tokenOf('builders'));
    const started = Date.now();
    const { tools } = await client.listTools();
    expect(tools.map((tool) => tool.name).sort()).toEqual([
      'notes__crash',
      'notes__read_note',
      'remote__add',
      'remote__echo',
    ]);
    // The stuck server is given up on after its timeoutMs (500 ms), not waited for.
    expect(Date.now() - started).toBeLessThan(4000);
    expect(tools.find((tool) => tool.name === 'remote__add')?.inputSchema).toMatchObject({
      required: ['a', 'b'],
    });
    // The gateway sent its own credential for the remote server, never the client's team token.
    expect(remote.authorizations.length).toBeGreaterThan(0);
    expect(new Set(remote.authorizations)).toEqual(new Set([`Bearer ${REMOTE_TOKEN}`]));
    const metrics = await (await fetch(`${gw.url}/metrics`)).text();
    expect(metrics).toMatch(/switchyard_mcp_server_errors_total\{server="down",reason="unavailable"\} [1-9]/);
    expect(metrics).toMatch(/switchyard_mcp_server_errors_total\{server="stuck",reason="timeout"\} [1-9]/);
    expect(gw.logs.some((line) => line.msg === 'MCP server failed' && line.server === 'down')).toBe(true);
  });

  it('calls a permitted tool on the remote and on the local (stdio) server, and the answer comes back as the server gave it', async () => {
    const client = await connect(await tokenOf('builders'), '/mcp', 'x-api-key');
    const sum = await client.callTool({ name: 'remote__add', arguments: { a: 2, b: 40 } });
    expect(sum).toMatchObject({ content: [{ type: 'text', text: '42' }], structuredContent: { sum: 42 } });
    expect(remote.calls.at(-1)).toEqual({ name: 'add', arguments: { a: 2, b: 40 } });
    const note = await client.callTool({ name: 'notes__read_note', arguments: { title: 'plans' } });
    expect(note.content).toEqual([{ type: 'text', text: 'note "plans" by ada' }]);
    // Only its configured env reached the local server: none of the gateway's own variables.
    expect(note.structuredContent).toMatchObject({ owner: 'ada', leakedVariables: [] });
    // A local server that exits is started again: by the next call at the latest (that one call may fail with
    // "unavailable" if it reaches the old process before its exit is seen).
    const before = (note.structuredContent as { pid: number }).pid;
    await client.callTool({ name: 'notes__crash', arguments: {} });
    const again = await eventually(
      () => client.callTool({ name: 'notes__read_note', arguments: { title: 'after' } }),
      5000,
    );
    expect(again.content).toEqual([{ type: 'text', text: 'note "after" by ada' }]);
    expect((again.structuredContent as { pid: number }).pid).not.toBe(before);
    // A tool that ran and failed is an answer (isError), not a protocol error.
    const failed = await client.callTool({ name: 'remote__add', arguments: { a: 'x', b: 1 } });
    expect(failed.isError).toBe(true);
  });

  it('refuses a tool the team is not permitted (even by its exact name) with an MCP error, and never calls the server', async () => {
    const client = await connect(await tokenOf('builders'));
    const before = remote.calls.length;
    for (const name of ['remote__delete_repo', 'delete_repo', 'nowhere__echo']) {
      const error = await refusal(client.callTool({ name, arguments: {} }));
      expect(error.code).toBe(ProtocolErrorCode.InvalidParams);
      expect(error.message).toContain('not available to this token');
    }
    expect(remote.calls.length).toBe(before);
  });

  it('a team without MCP permissions sees no tools; a token narrows its team like its model list', async () => {
    const outsider = await connect(await tokenOf('outsiders'));
    expect((await outsider.listTools()).tools).toEqual([]);
    expect((await refusal(outsider.callTool({ name: 'remote__echo', arguments: { text: 'x' } }))).code).toBe(
      ProtocolErrorCode.InvalidParams,
    );
    const narrow = await connect(await tokenOf('builders', { mcpTools: ['remote__echo'] }));
    expect((await narrow.listTools()).tools.map((tool) => tool.name)).toEqual(['remote__echo']);
    expect((await refusal(narrow.callTool({ name: 'remote__add', arguments: { a: 1, b: 1 } }))).code).toBe(
      ProtocolErrorCode.InvalidParams,
    );
  });

  it('a call to a server that is down or stuck fails with an MCP error within its timeout, not a hung request', async () => {
    const client = await connect(await tokenOf('builders'));
    let started = Date.now();
    // Both failed earlier lists, so they may be skipped now (their back-off: mcp-hardening.e2e.spec.ts): "is down".
    const down = await refusal(client.callTool({ name: 'down__anything', arguments: {} }));
    expect(down.message).toMatch(/MCP server "down" is (unavailable|down)/);
    expect(Date.now() - started).toBeLessThan(4000);
    started = Date.now();
    const slow = await refusal(client.callTool({ name: 'stuck__anything', arguments: {} }));
    expect([UPSTREAM_TIMEOUT, ProtocolErrorCode.InternalError]).toContain(slow.code);
    expect(slow.message).toMatch(/MCP server "stuck" (did not answer in time|is down)/);
    expect(Date.now() - started).toBeLessThan(4000);
    // The others still answer.
    expect(
      (await client.callTool({ name: 'remote__echo', arguments: { text: 'still here' } })).content,
    ).toEqual([{ type: 'text', text: 'still here' }]);
  });

  it('/mcp/<server> serves one server alone with its own names (resources too); another team gets 404', async () => {
    const client = await connect(await tokenOf('builders'), '/mcp/remote');
    expect((await client.listTools()).tools.map((tool) => tool.name).sort()).toEqual(['add', 'echo']);
    expect((await client.callTool({ name: 'echo', arguments: { text: 'alone' } })).content).toEqual([
      { type: 'text', text: 'alone' },
    ]);
    expect((await refusal(client.callTool({ name: 'delete_repo', arguments: {} }))).code).toBe(
      ProtocolErrorCode.InvalidParams,
    );
    expect((await client.listResources()).resources).toEqual([
      { uri: 'memo://readme', name: 'readme', mimeType: 'text/plain' },
    ]);
    expect((await client.readResource({ uri: 'memo://readme' })).contents).toEqual([
      { uri: 'memo://readme', mimeType: 'text/plain', text: 'Read me first.' },
    ]);
    // An error the server answers itself reaches the client as the server sent it.
    const unknown = await refusal(client.readResource({ uri: 'memo://nothing' }));
    expect(unknown).toMatchObject({
      code: ProtocolErrorCode.InvalidParams,
      message: expect.stringContaining('Unknown resource: memo://nothing'),
    });
    const prompts = await (await connect(await tokenOf('builders'))).listPrompts();
    expect(prompts.prompts.map((prompt) => prompt.name)).toEqual(['notes__summarise']);
    const outsider = await fetch(`${gw.url}/mcp/remote`, {
      method: 'POST',
      headers: {
        authorization: `Bearer ${await tokenOf('outsiders')}`,
        'content-type': 'application/json',
        accept: 'application/json, text/event-stream',
      },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' }),
    });
    expect(outsider.status).toBe(404);
    expect(await outsider.json()).toMatchObject({ jsonrpc: '2.0', id: null, error: { code: -32600 } });
  });

  it('/mcp/<server> of a server that is down answers its lists with an MCP error, not an empty list', async () => {
    const client = await connect(await tokenOf('builders'), '/mcp/down');
    expect(await refusal(client.listTools())).toBeInstanceOf(ProtocolError);
    // On /mcp the same server is only left out.
    const all = await connect(await tokenOf('builders'));
    expect((await all.listTools()).tools.map((tool) => tool.name)).toContain('remote__echo');
  });

  it("/mcp serves the permitted servers' resources under their own URIs, each read sent to its owner", async () => {
    const client = await connect(await tokenOf('builders'));
    const readBefore = remote.reads.length;
    // The notes server (stdio) offers no resources: left out. The stuck server (another copy of the remote one) lists
    // the same URI: listed once, read from the first server in configured order.
    expect((await client.listResources()).resources).toEqual([
      { uri: 'memo://readme', name: 'readme', mimeType: 'text/plain' },
    ]);
    expect((await client.listResourceTemplates()).resourceTemplates).toEqual([
      { uriTemplate: 'memo://notes/{name}', name: 'note', mimeType: 'text/plain' },
    ]);
    expect((await client.readResource({ uri: 'memo://readme' })).contents).toEqual([
      { uri: 'memo://readme', mimeType: 'text/plain', text: 'Read me first.' },
    ]);
    // Not listed, but the remote server's template matches it.
    expect((await client.readResource({ uri: 'memo://notes/monday' })).contents).toEqual([
      { uri: 'memo://notes/monday', mimeType: 'text/plain', text: 'Note monday.' },
    ]);
    // A URI no permitted server lists or templates is refused by the gateway, not sent anywhere.
    expect((await refusal(client.readResource({ uri: 'other://secret' }))).code).toBe(
      ProtocolErrorCode.InvalidParams,
    );
    expect(remote.reads.slice(readBefore)).toEqual(['memo://readme', 'memo://notes/monday']);
    // A team that may reach no server sees no resources and reads none.
    const outsider = await connect(await tokenOf('outsiders'));
    expect((await outsider.listResources()).resources).toEqual([]);
    expect((await refusal(outsider.readResource({ uri: 'memo://readme' }))).code).toBe(
      ProtocolErrorCode.InvalidParams,
    );
  });

  it('without a token: 401 with WWW-Authenticate naming the RFC 9728 metadata of the resource asked for (before anything of MCP), which is served', async () => {
    const wellKnown = `${gw.url}/.well-known/oauth-protected-resource`;
    for (const [path, token, challenge] of [
      ['/mcp', undefined, `Bearer resource_metadata="${wellKnown}/mcp"`],
      ['/mcp/remote', undefined, `Bearer resource_metadata="${wellKnown}/mcp/remote"`],
      // A token that is not one (RFC 6750): invalid_token.
      ['/mcp', 'sk-not-a-token', `Bearer error="invalid_token", resource_metadata="${wellKnown}/mcp"`],
      [
        '/mcp/remote',
        'sk-not-a-token',
        `Bearer error="invalid_token", resource_metadata="${wellKnown}/mcp/remote"`,
      ],
    ] as const) {
      const answer = await rawPost(
        path,
        token,
        era === 'modern' ? modernRequest(1, 'tools/list') : listTools,
      );
      expect(answer.status).toBe(401);
      expect(answer.headers.get('www-authenticate')).toBe(challenge);
      expect(await answer.json()).toMatchObject({
        jsonrpc: '2.0',
        id: null,
        error: { code: ProtocolErrorCode.InvalidRequest },
      });
    }
    // The official client is told so on connecting (the modern one at its server/discover probe).
    const client = new Client(
      { name: 'e2e', version: '1.0.0' },
      era === 'modern' ? { versionNegotiation: { mode: { pin: revision } } } : {},
    );
    const refused = await client.connect(new StreamableHTTPClientTransport(new URL(`${gw.url}/mcp`))).then(
      () => undefined,
      (thrown: unknown) => thrown,
    );
    expect(refused).toBeInstanceOf(SdkHttpError);
    expect(refused).toMatchObject({ status: 401 });
    // Each resource's document at its path-aware address (RFC 9728, 3.1); the bare one names /mcp too.
    for (const [at, resource, name] of [
      [`${wellKnown}/mcp`, `${gw.url}/mcp`, 'Switchyard MCP gateway'],
      [wellKnown, `${gw.url}/mcp`, 'Switchyard MCP gateway'],
      [`${wellKnown}/mcp/remote`, `${gw.url}/mcp/remote`, 'Switchyard MCP gateway: remote'],
      // Any well-formed id, configured or not: the document tells nobody which servers exist.
      [`${wellKnown}/mcp/unconfigured`, `${gw.url}/mcp/unconfigured`, 'Switchyard MCP gateway: unconfigured'],
    ] as const) {
      const metadata = await fetch(at);
      expect(metadata.status).toBe(200);
      expect(await metadata.json()).toEqual({
        resource,
        bearer_methods_supported: ['header'],
        resource_name: name,
      });
    }
    expect((await fetch(`${wellKnown}/mcp/not_an_id`)).status).toBe(404);
  });

  it('toolCallsPerMinute refuses the call over the limit with an MCP error (429 in the log, counted)', async () => {
    await awayFromMinuteEdge();
    const client = await connect(await tokenOf('metered'));
    for (const text of ['one', 'two'])
      expect((await client.callTool({ name: 'remote__echo', arguments: { text } })).content).toEqual([
        { type: 'text', text },
      ]);
    const before = remote.calls.length;
    const limited = await refusal(client.callTool({ name: 'remote__echo', arguments: { text: 'three' } }));
    expect(limited.code).toBe(-32010);
    expect(limited.message).toContain(
      'toolCallsPerMinute limit of team "metered" reached (2/2 MCP calls made: tools, prompts and resource reads)',
    );
    expect(limited.data).toMatchObject({
      code: 'rate_limit_exceeded',
      retryAfterSeconds: expect.any(Number),
    });
    expect(remote.calls.length).toBe(before);
    // Listing is not a call: still answered.
    expect((await client.listTools()).tools.length).toBe(3);
    const metrics = await (await fetch(`${gw.url}/metrics`)).text();
    expect(metrics).toContain(
      'switchyard_limit_rejections_total{team="metered",limit="toolCallsPerMinute"} 1',
    );
  });

  it('every tool call is in the request log (team, token, person, server, tool, status, duration) and counted; content redacted where the team keeps it', async () => {
    const token = await tokenOf('builders', { name: 'agent' });
    const client = await connect(token);
    await client.callTool({ name: 'remote__echo', arguments: { text: 'mail alice@example.com' } });
    await refusal(client.callTool({ name: 'remote__delete_repo', arguments: {} }));
    await refusal(client.callTool({ name: 'nowhere__echo', arguments: {} }));
    const entries = await eventually(async () => {
      const page = await gw.admin(
        'GET',
        '/admin/v1/requests?team=builders&endpoint=mcp.tools%2Fcall&limit=100',
      );
      const mine = (page.body.data as Array<Record<string, any>>).filter(
        (entry) => entry.token.name === 'agent',
      );
      expect(mine).toHaveLength(3);
      return mine;
    }, 5000);
    const answered = entries.find((entry) => entry.model === 'remote__echo')!;
    expect(answered).toMatchObject({
      team: 'builders',
      person: null,
      endpoint: 'mcp.tools/call',
      deployment: 'remote/echo',
      status: 200,
      outcome: 'ok',
      errorCode: null,
      contentKept: true,
    });
    expect(answered.latencyMs).toBeGreaterThan(0);
    const refused = entries.find((entry) => entry.model === 'remote__delete_repo')!;
    expect(refused).toMatchObject({ status: 403, outcome: 'rejected', errorCode: 'tool_not_permitted' });
    // A name with no configured server: refused and logged all the same, under the server (none).
    const nowhere = entries.find((entry) => entry.model === '(none)__nowhere__echo')!;
    expect(nowhere).toMatchObject({ status: 403, outcome: 'rejected', deployment: null });
    const content = (await gw.admin('GET', `/admin/v1/requests/${answered.id}`)).body.content;
    expect(JSON.stringify(content)).not.toContain('alice@example.com');
    expect(content.request).toEqual({ text: 'mail [email]' });
    expect(content.response).toMatchObject({ content: [{ type: 'text', text: 'mail [email]' }] });
    const metrics = await (await fetch(`${gw.url}/metrics`)).text();
    expect(metrics).toMatch(
      /switchyard_mcp_calls_total\{team="builders",server="remote",tool="echo",outcome="ok"\} [1-9]/,
    );
    expect(metrics).toMatch(
      /switchyard_mcp_calls_total\{team="builders",server="remote",tool="\(unlisted\)",outcome="refused"\} [1-9]/,
    );
    expect(metrics).toMatch(
      /switchyard_mcp_calls_total\{team="builders",server="\(none\)",tool="\(unlisted\)",outcome="refused"\} [1-9]/,
    );
    expect(metrics).toMatch(
      /switchyard_mcp_call_duration_seconds_count\{server="remote",outcome="ok"\} [1-9]/,
    );
  });

  it("an org-admin sets a team's MCP permissions through the admin API, in force at once; unknown servers and globs matching nothing are 400; a team-admin cannot", async () => {
    expect((await gw.admin('POST', '/admin/v1/teams', { id: 'late' })).status).toBe(201);
    const client = await connect(await tokenOf('late'));
    expect((await client.listTools()).tools).toEqual([]);
    const set = await gw.admin('PATCH', '/admin/v1/teams/late', {
      mcp: { servers: ['remote'], tools: ['remote__echo'] },
    });
    expect(set.status).toBe(200);
    expect(set.body.mcp).toEqual({ servers: ['remote'], tools: ['remote__echo'] });
    // The same token, at once (the credential cache is invalidated like for any team change).
    expect((await client.listTools()).tools.map((tool) => tool.name)).toEqual(['remote__echo']);
    const unknown = await gw.admin('PATCH', '/admin/v1/teams/late', { mcp: { servers: ['nowhere'] } });
    expect(unknown.status).toBe(400);
    expect(unknown.body.error).toMatchObject({ param: 'mcp.servers' });
    expect(unknown.body.error.message).toContain('Unknown MCP server "nowhere"');
    // A glob that can match nothing is refused in the same shape: a list typed as one glob, an unprefixed tool.
    for (const [tools, says] of [
      [
        ['remote__echo, remote__add'],
        'Invalid \'mcp.tools\': holds "remote__echo, remote__add", which has whitespace',
      ],
      [['echo'], 'The tool glob "echo" matches no tool of the team\'s servers'],
      [['notes__*'], '"notes" is not one of the team\'s MCP servers'],
    ] as const) {
      const bad = await gw.admin('PATCH', '/admin/v1/teams/late', { mcp: { servers: ['remote'], tools } });
      expect(bad.status).toBe(400);
      expect(bad.body.error).toMatchObject({ type: 'invalid_request_error', param: 'mcp.tools' });
      expect(bad.body.error.message).toContain(says);
    }
    const badToken = await gw.admin('POST', '/admin/v1/teams/late/tokens', { mcpTools: [''] });
    expect(badToken.status).toBe(400);
    expect(badToken.body.error).toMatchObject({ param: 'mcpTools' });
    const teamAdmin = await signedIn(gw, { subject: 'mcp-team-admin' }, [
      { kind: 'team-admin', team: 'late' },
    ]);
    const widened = await teamAdmin.call('PATCH', '/admin/v1/teams/late', {
      mcp: { servers: ['remote', 'notes'], tools: ['*'] },
    });
    expect(widened.status).toBe(403);
    expect(widened.body.error).toMatchObject({ code: 'permission_denied', param: 'mcp' });
    const audit = await gw.admin('GET', '/admin/v1/audit?target=team/late&action=team.update');
    expect(audit.body.data[0].details).toMatchObject({
      mcp: { servers: ['remote'], tools: ['remote__echo'] },
    });
  });

  it('the admin API lists every server with its health and tools now, never its credentials', async () => {
    const answer = await gw.admin('GET', '/admin/v1/mcp/servers');
    expect(answer.status).toBe(200);
    const byId = Object.fromEntries(
      (answer.body.data as Array<{ id: string }>).map((server) => [server.id, server]),
    );
    expect(Object.keys(byId)).toEqual(['remote', 'notes', 'down', 'stuck']);
    expect(byId.remote).toMatchObject({ kind: 'remote', url: remote.url, status: 'up', last_error: null });
    expect((byId.remote as any).tools.map((tool: { name: string }) => tool.name)).toEqual([
      'echo',
      'add',
      'delete_repo',
    ]);
    expect(byId.notes).toMatchObject({ kind: 'local', command: process.execPath, status: 'up' });
    expect(byId.down).toMatchObject({
      status: 'down',
      tools: null,
      // The cause, not only `fetch failed`: nothing listens on its port.
      last_error: expect.stringMatching(/^unavailable: .*ECONNREFUSED/),
    });
    expect(byId.stuck).toMatchObject({
      status: 'down',
      tools: null,
      last_error: expect.stringMatching(/^timeout: /),
    });
    expect(JSON.stringify(answer.body)).not.toContain(REMOTE_TOKEN);
    // A team token is not an admin credential.
    expect((await gw.asTeam(await tokenOf('builders'), 'GET', '/admin/v1/mcp/servers')).status).toBe(401);
  });

  if (era === 'legacy') {
    it('speaks the revisions 2025-11-25 and 2025-06-18 as JSON, each initialize opening an Mcp-Session-Id session; GET is 405', async () => {
      const token = await tokenOf('builders');
      for (const protocolVersion of ['2025-11-25', '2025-06-18']) {
        const answer = await rawPost('/mcp', token, initialize(protocolVersion));
        expect(answer.status).toBe(200);
        expect(answer.headers.get('content-type')).toMatch(/^application\/json/);
        // A random id of visible ASCII (the spec's rule), new for every initialize.
        const session = answer.headers.get('mcp-session-id');
        expect(session).toMatch(/^[\x21-\x7e]{32,}$/);
        expect(await answer.json()).toMatchObject({
          result: { protocolVersion, serverInfo: { name: 'switchyard' } },
        });
        const listed = await rawPost('/mcp', token, {
          ...listTools,
          headers: { 'mcp-protocol-version': protocolVersion, 'mcp-session-id': session! },
        });
        expect(listed.status).toBe(200);
        expect(((await listed.json()) as any).result.tools.length).toBe(4);
        // Without a session a request is still served on its own (the gateway does not require one).
        const alone = await rawPost('/mcp', token, {
          ...listTools,
          headers: { 'mcp-protocol-version': protocolVersion },
        });
        expect(alone.status).toBe(200);
        expect(alone.headers.get('mcp-session-id')).toBeNull();
      }
      // A failed initialize opens nothing.
      const refused = await rawPost('/mcp', token, {
        body: { jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: 7 } },
      });
      expect(refused.headers.get('mcp-session-id')).toBeNull();
      // A Host header that is no host name (a port out of range) is no concern of MCP's: still answered.
      const status = await new Promise<number | undefined>((resolve, reject) => {
        const body = JSON.stringify(listTools.body);
        const sent = httpRequest(`${gw.url}/mcp`, {
          method: 'POST',
          headers: {
            host: 'gateway:99999',
            authorization: `Bearer ${token}`,
            'content-type': 'application/json',
            'content-length': Buffer.byteLength(body),
            accept: 'application/json, text/event-stream',
          },
        });
        sent.once('response', (answer) => {
          answer.resume();
          resolve(answer.statusCode);
        });
        sent.once('error', reject);
        sent.end(body);
      });
      expect(status).toBe(200);
      const stream = await fetch(`${gw.url}/mcp`, {
        headers: { authorization: `Bearer ${token}`, accept: 'text/event-stream' },
      });
      expect(stream.status).toBe(405);
      expect(stream.headers.get('allow')).toBe('POST, DELETE');
    });

    it("a session is the token's and the route's: unknown, ended, another team's or another route's is 404; DELETE ends it", async () => {
      const token = await tokenOf('builders');
      const opened = await rawPost('/mcp', token, initialize('2025-11-25'));
      const session = opened.headers.get('mcp-session-id')!;
      const withSession = (id: string) => ({
        ...listTools,
        headers: { 'mcp-protocol-version': '2025-11-25', 'mcp-session-id': id },
      });
      const notFound = async (answer: Response) => {
        expect(answer.status).toBe(404);
        expect(await answer.json()).toMatchObject({
          jsonrpc: '2.0',
          id: null,
          error: { code: -32001, message: 'Session not found' },
        });
      };
      expect((await rawPost('/mcp', token, withSession(session))).status).toBe(200);
      await notFound(await rawPost('/mcp', token, withSession('no-such-session')));
      await notFound(await rawPost('/mcp', token, withSession('not visible ascii')));
      // Another team's token, another token of the same team, another route: not theirs.
      await notFound(await rawPost('/mcp', await tokenOf('outsiders'), withSession(session)));
      await notFound(await rawPost('/mcp', await tokenOf('builders'), withSession(session)));
      await notFound(await rawPost('/mcp/remote', token, withSession(session)));
      // A notification names it too.
      await notFound(
        await rawPost('/mcp', token, {
          body: { jsonrpc: '2.0', method: 'notifications/initialized' },
          headers: { 'mcp-session-id': 'no-such-session' },
        }),
      );
      const end = (id: string | undefined, who = token, path = '/mcp') =>
        fetch(`${gw.url}${path}`, {
          method: 'DELETE',
          headers: { authorization: `Bearer ${who}`, ...(id ? { 'mcp-session-id': id } : {}) },
        });
      const anonymous = await end(undefined);
      expect(anonymous.status).toBe(400);
      expect(await anonymous.json()).toMatchObject({ jsonrpc: '2.0', id: null, error: { code: -32000 } });
      await notFound(await end(session, await tokenOf('outsiders')));
      expect((await rawPost('/mcp', token, withSession(session))).status).toBe(200);
      const ended = await end(session);
      expect(ended.status).toBe(204);
      await notFound(await rawPost('/mcp', token, withSession(session)));
      await notFound(await end(session));
      // Kept in Redis by the SHA-256 of its id, with the sliding TTL (24 h): never the id itself.
      const again = (await rawPost('/mcp', token, initialize('2025-06-18'))).headers.get('mcp-session-id')!;
      const keys = await gw.redis.keys(`${gw.prefix}mcp:session*`);
      expect(keys.length).toBeGreaterThan(0);
      const stored = await Promise.all(
        keys.map(async (key) =>
          key.includes(':sessions:') ? await gw.redis.hgetall(key) : await gw.redis.zrange(key, '0', '-1'),
        ),
      );
      expect(JSON.stringify(stored)).not.toContain(again);
      const ttl = await gw.redis.ttl(keys[0]);
      expect(ttl).toBeGreaterThan(23 * 3600);
      expect(ttl).toBeLessThanOrEqual(24 * 3600);
      // On /mcp/<server> a session is that route's.
      const ofOne = (await rawPost('/mcp/remote', token, initialize('2025-11-25'))).headers.get(
        'mcp-session-id',
      )!;
      expect((await rawPost('/mcp/remote', token, withSession(ofOne))).status).toBe(200);
      await notFound(await rawPost('/mcp', token, withSession(ofOne)));
      expect((await end(ofOne, token, '/mcp/remote')).status).toBe(204);
    });

    it('keeps at most 100 sessions per token in Redis: the 101st initialize ends the one used longest ago', async () => {
      const token = await tokenOf('builders');
      const otherToken = await tokenOf('builders');
      const withSession = (id: string) => ({
        ...listTools,
        headers: { 'mcp-protocol-version': '2025-11-25', 'mcp-session-id': id },
      });
      const open = async (who: string) =>
        (await rawPost('/mcp', who, initialize('2025-11-25'))).headers.get('mcp-session-id')!;
      const bystander = await open(otherToken);
      const opened: string[] = [];
      for (let i = 0; i < 105; i++) opened.push(await open(token));
      expect(new Set(opened).size).toBe(105);
      const sizes = await Promise.all(
        (await gw.redis.keys(`${gw.prefix}mcp:session*`)).map((key) =>
          key.includes(':sessions:') ? gw.redis.hlen(key) : gw.redis.zcard(key),
        ),
      );
      expect(Math.max(...sizes)).toBe(100);
      for (const gone of opened.slice(0, 5))
        expect((await rawPost('/mcp', token, withSession(gone))).status).toBe(404);
      for (const kept of [opened[5], opened[104]])
        expect((await rawPost('/mcp', token, withSession(kept))).status).toBe(200);
      // The cap is per token: another token's session is untouched.
      expect((await rawPost('/mcp', otherToken, withSession(bystander))).status).toBe(200);
    });

    it("the 1.x SDK's client (what most deployed agents embed) keeps its session across two replicas, starts a new one after a 404, and ends it", async () => {
      const other = await startTestGateway({ ...options, prefix: gw.prefix });
      try {
        const token = await tokenOf('builders');
        const served: string[] = [];
        const transport = () =>
          new StreamableHTTPClientTransportV1(new URL(`${gw.url}/mcp`), {
            requestInit: { headers: { authorization: `Bearer ${token}` } },
            fetch: alternating([gw, other], served),
          });
        let sent = transport();
        const client = new ClientV1({ name: 'e2e-v1', version: '1.0.0' });
        await client.connect(sent);
        try {
          const session = sent.sessionId;
          expect(session).toMatch(/^[\x21-\x7e]{32,}$/);
          for (const text of ['one', 'two', 'three']) {
            expect((await client.listTools()).tools.map((tool) => tool.name)).toContain('remote__echo');
            expect((await client.callTool({ name: 'remote__echo', arguments: { text } })).content).toEqual([
              { type: 'text', text },
            ]);
          }
          // Both replicas answered its requests, all under the one session.
          expect(new Set(served)).toEqual(new Set([gw.url, other.url]));
          expect(sent.sessionId).toBe(session);
          // The session is gone (as if it expired): 404, and the client starts a new one with initialize.
          await gw.redis.del(await gw.redis.keys(`${gw.prefix}mcp:session*`));
          const lost = await client.listTools().then(
            () => undefined,
            (thrown: unknown) => thrown,
          );
          expect(lost).toMatchObject({ code: 404 });
          await client.close();
          sent = transport();
          await client.connect(sent);
          expect(sent.sessionId).toMatch(/^[\x21-\x7e]{32,}$/);
          expect(sent.sessionId).not.toBe(session);
          expect((await client.listTools()).tools.map((tool) => tool.name)).toContain('remote__echo');
          // Ended by the client: later use is 404.
          const ended = sent.sessionId!;
          await sent.terminateSession();
          const after = await rawPost('/mcp', token, {
            ...listTools,
            headers: { 'mcp-protocol-version': '2025-11-25', 'mcp-session-id': ended },
          });
          expect(after.status).toBe(404);
        } finally {
          await client.close();
        }
      } finally {
        await other.close();
      }
    });

    it("the 2.x SDK's client on 2025-11-25 keeps its session across two replicas and ends it", async () => {
      const other = await startTestGateway({ ...options, prefix: gw.prefix });
      try {
        const token = await tokenOf('builders');
        const served: string[] = [];
        const transport = new StreamableHTTPClientTransport(new URL(`${gw.url}/mcp`), {
          requestInit: { headers: { authorization: `Bearer ${token}` } },
          fetch: alternating([gw, other], served),
        });
        const client = new Client({ name: 'e2e', version: '1.0.0' });
        await client.connect(transport);
        try {
          expect(client.getNegotiatedProtocolVersion()).toBe('2025-11-25');
          const session = transport.sessionId;
          expect(session).toMatch(/^[\x21-\x7e]{32,}$/);
          for (const text of ['one', 'two', 'three'])
            expect((await client.callTool({ name: 'remote__echo', arguments: { text } })).content).toEqual([
              { type: 'text', text },
            ]);
          expect(new Set(served)).toEqual(new Set([gw.url, other.url]));
          expect(transport.sessionId).toBe(session);
          await transport.terminateSession();
          const after = await rawPost('/mcp', token, {
            ...listTools,
            headers: { 'mcp-protocol-version': '2025-11-25', 'mcp-session-id': session! },
          });
          expect(after.status).toBe(404);
        } finally {
          await client.close();
        }
      } finally {
        await other.close();
      }
    });
  } else {
    it('speaks 2026-07-28: server/discover advertises it and the gateway; no initialize, no session', async () => {
      const client = await connect(await tokenOf('builders'));
      expect(client.getDiscoverResult()).toMatchObject({
        supportedVersions: expect.arrayContaining(['2026-07-28']),
        capabilities: { tools: {}, prompts: {}, resources: {} },
        _meta: { 'io.modelcontextprotocol/serverInfo': { name: 'switchyard' } },
      });
      expect(client.getServerVersion()).toMatchObject({ name: 'switchyard' });
      // On the wire: each request carries its revision and stands alone.
      const token = await tokenOf('builders');
      const discovered = await rawPost('/mcp', token, modernRequest(1, 'server/discover'));
      expect(discovered.status).toBe(200);
      expect(discovered.headers.get('mcp-session-id')).toBeNull();
      expect(((await discovered.json()) as any).result.supportedVersions).toContain('2026-07-28');
      // No sessions on this revision: an Mcp-Session-Id sent (even one never issued) is ignored.
      const listed = await rawPost('/mcp', token, {
        ...modernRequest(2, 'tools/list'),
        headers: { ...modernRequest(2, 'tools/list').headers, 'mcp-session-id': 'never-issued' },
      });
      expect(listed.status).toBe(200);
      expect(listed.headers.get('content-type')).toMatch(/^application\/json/);
      // The list is this team's: no cache may share it with another (cacheScope private).
      expect(((await listed.json()) as any).result).toMatchObject({
        resultType: 'complete',
        ttlMs: 0,
        cacheScope: 'private',
        tools: expect.arrayContaining([expect.objectContaining({ name: 'remote__echo' })]),
      });
      const called = await rawPost(
        '/mcp',
        token,
        modernRequest(3, 'tools/call', { name: 'remote__echo', arguments: { text: 'raw' } }),
      );
      expect(((await called.json()) as any).result.content).toEqual([{ type: 'text', text: 'raw' }]);
      // A change-notification stream is closed at once: the gateway relays no notifications, so it honours none.
      const listen = await rawPost(
        '/mcp',
        token,
        modernRequest(5, 'subscriptions/listen', { notifications: { toolsListChanged: true } }),
      );
      expect(listen.status).toBe(200);
      const frames = await listen.text();
      expect(frames).toContain('"notifications":{}');
      expect(frames).toContain('"result":{"resultType":"complete"');
      // A revision the gateway does not serve is refused as the spec says (-32022), naming those it does.
      const unknown = await rawPost('/mcp', token, modernRequest(4, 'tools/list', {}, '2099-01-01'));
      expect(unknown.status).toBe(400);
      expect(((await unknown.json()) as any).error).toMatchObject({
        code: -32022,
        data: { supported: expect.arrayContaining(['2026-07-28']) },
      });
    });
  }

  it('two replicas on one Redis: a client may go to either, and toolCallsPerMinute holds across them', async () => {
    await awayFromMinuteEdge();
    const other = await startTestGateway({ ...options, prefix: gw.prefix });
    try {
      const token = await tokenOf('metered-twice');
      const [a, b] = [await connect(token), await connect(token, '/mcp', 'bearer', other)];
      expect((await b.listTools()).tools.map((tool) => tool.name).sort()).toEqual([
        'remote__add',
        'remote__delete_repo',
        'remote__echo',
      ]);
      for (const [client, text] of [
        [a, 'a'],
        [b, 'b'],
        [a, 'a again'],
      ] as const)
        expect((await client.callTool({ name: 'remote__echo', arguments: { text } })).content).toEqual([
          { type: 'text', text },
        ]);
      const limited = await refusal(b.callTool({ name: 'remote__echo', arguments: { text: 'b again' } }));
      expect(limited.code).toBe(-32010);
      expect(limited.message).toContain('(3/3 MCP calls made');
    } finally {
      await other.close();
    }
  });
});

/**
 * Tool servers of the 2026-07-28 era behind the gateway, a remote one (the v2 SDK's createMcpHandler) and a local
 * one (its serveStdio), both refusing 2025-era requests: the gateway's client negotiates that revision with them
 * (server/discover, never initialize), beside a 2025-era server, and serves all to clients of either era.
 */
describe('MCP gateway in front of 2026-07-28 servers', () => {
  let upstream: OpenAIUpstream;
  let modern: ModernMcpServer;
  let remote: RemoteMcpServer;
  let gw: TestGateway;

  beforeAll(async () => {
    upstream = await new OpenAIUpstream().start();
    modern = await new ModernMcpServer(REMOTE_TOKEN).start();
    remote = await new RemoteMcpServer({ token: REMOTE_TOKEN }).start();
    const server = (url: string) => ({ url, headers: { Authorization: 'Bearer ${MCP_REMOTE_TOKEN}' } });
    gw = await startTestGateway({
      upstreamUrl: upstream.url,
      env: { MCP_REMOTE_TOKEN: REMOTE_TOKEN },
      config: {
        mcp: {
          servers: {
            modern: server(modern.url),
            remote: server(remote.url),
            nearby: { command: process.execPath, args: [STDIO_MODERN_SERVER], timeoutMs: 10_000 },
          },
        },
        teams: { mixed: { mcp: { servers: ['modern', 'remote', 'nearby'], tools: ['*'] } } },
      },
    });
  });

  afterAll(async () => {
    await gw.close();
    await Promise.all([modern.stop(), remote.stop(), upstream.stop()]);
  });

  it('speaks 2026-07-28 to them (never initialize), remote and local, beside a 2025-era server, and serves all to clients of either era', async () => {
    const created = await gw.admin('POST', '/admin/v1/teams/mixed/tokens', {});
    const headers = { authorization: `Bearer ${created.body.token as string}` };
    for (const { era, revision } of ERAS) {
      const client = new Client(
        { name: 'e2e', version: '1.0.0' },
        era === 'modern' ? { versionNegotiation: { mode: { pin: revision } } } : {},
      );
      await client.connect(
        new StreamableHTTPClientTransport(new URL(`${gw.url}/mcp`), { requestInit: { headers } }),
      );
      try {
        // A call before any list (the gateway's first request to the server, for the first client): its `region`
        // reaches the server in the Mcp-Param-Region header too, which the server requires.
        expect(
          (await client.callTool({ name: 'modern__forecast', arguments: { region: era } })).content,
        ).toEqual([{ type: 'text', text: `${era}: sunny` }]);
        expect((await client.listTools()).tools.map((tool) => tool.name).sort()).toEqual([
          'modern__forecast',
          'modern__shout',
          'nearby__era',
          'remote__add',
          'remote__delete_repo',
          'remote__echo',
        ]);
        expect((await client.callTool({ name: 'modern__shout', arguments: { text: era } })).content).toEqual([
          { type: 'text', text: era.toUpperCase() },
        ]);
        // The local one answers the gateway on 2026-07-28 whichever era its client speaks.
        expect((await client.callTool({ name: 'nearby__era', arguments: {} })).structuredContent).toEqual({
          era: 'modern',
          revision: '2026-07-28',
        });
        expect((await client.callTool({ name: 'remote__echo', arguments: { text: era } })).content).toEqual([
          { type: 'text', text: era },
        ]);
      } finally {
        await client.close();
      }
    }
    const methods = modern.requests.map((request) => request.method);
    expect(methods).toContain('server/discover');
    expect(methods).not.toContain('initialize');
    expect(new Set(modern.requests.map((request) => request.revision))).toEqual(new Set(['2026-07-28']));
    expect(new Set(modern.authorizations)).toEqual(new Set([`Bearer ${REMOTE_TOKEN}`]));
    expect(modern.calls).toContainEqual({ name: 'forecast', arguments: { region: 'modern' } });
    // The server does refuse a call whose argument is not mirrored in its header: the gateway's calls were.
    const unmirrored = await fetch(modern.url, {
      method: 'POST',
      headers: {
        authorization: `Bearer ${REMOTE_TOKEN}`,
        'content-type': 'application/json',
        accept: 'application/json, text/event-stream',
        'mcp-protocol-version': '2026-07-28',
        'mcp-method': 'tools/call',
        'mcp-name': 'forecast',
      },
      body: JSON.stringify(
        modernRequest(1, 'tools/call', { name: 'forecast', arguments: { region: 'x' } }).body,
      ),
    });
    expect(unmirrored.status).toBe(400);
    expect(((await unmirrored.json()) as any).error.code).toBe(-32020);
  });
});

/** A request with headers fetch() will not send (Host): its status, headers and body. */
function rawHttp(
  url: string,
  method: string,
  headers: Record<string, string>,
  body?: string,
): Promise<{ status: number; headers: Record<string, string | string[] | undefined>; body: string }> {
  return new Promise((resolve, reject) => {
    const sent = httpRequest(url, {
      method,
      headers: { ...headers, ...(body ? { 'content-length': String(Buffer.byteLength(body)) } : {}) },
    });
    sent.once('response', (answer) => {
      let text = '';
      answer.setEncoding('utf8');
      answer.on('data', (chunk: string) => (text += chunk));
      answer.once('end', () => resolve({ status: answer.statusCode!, headers: answer.headers, body: text }));
    });
    sent.once('error', reject);
    sent.end(body);
  });
}

/**
 * Where the endpoint says it is (RFC 9728 `resource`, the 401's `resource_metadata`): `server.publicUrl` whatever the
 * Host; without it the request's own, forwarded headers only from `server.trustedProxies`. And every answer under
 * /mcp is JSON-RPC shaped, a path no route serves included.
 */
describe('MCP endpoint: its address and its errors', () => {
  let upstream: OpenAIUpstream;
  let remote: RemoteMcpServer;
  let published: TestGateway;
  let direct: TestGateway;

  beforeAll(async () => {
    upstream = await new OpenAIUpstream().start();
    remote = await new RemoteMcpServer({ token: REMOTE_TOKEN }).start();
    const config = (server: object) => ({
      server,
      mcp: { servers: { gh: { url: remote.url, headers: { Authorization: `Bearer ${REMOTE_TOKEN}` } } } },
      teams: { builders: { mcp: { servers: ['gh'], tools: ['*'] } } },
    });
    published = await startTestGateway({
      upstreamUrl: upstream.url,
      config: config({ publicUrl: 'https://mcp.example.com/' }),
    });
    direct = await startTestGateway({ upstreamUrl: upstream.url, config: config({ trustedProxies: [] }) });
  });

  afterAll(async () => {
    await Promise.all([published.close(), direct.close()]);
    await Promise.all([remote.stop(), upstream.stop()]);
  });

  it('names server.publicUrl whatever Host or forwarded headers say; without it, forwarded headers only from a trusted proxy', async () => {
    const evil = { host: 'evil.example', 'x-forwarded-host': 'evil.example', 'x-forwarded-proto': 'https' };
    const wellKnown = '/.well-known/oauth-protected-resource';
    const metadata = await rawHttp(`${published.url}${wellKnown}/mcp/gh`, 'GET', evil);
    expect(JSON.parse(metadata.body)).toMatchObject({ resource: 'https://mcp.example.com/mcp/gh' });
    const refused = await rawHttp(`${published.url}/mcp`, 'POST', {
      ...evil,
      'content-type': 'application/json',
    });
    expect(refused.status).toBe(401);
    expect(refused.headers['www-authenticate']).toBe(
      `Bearer resource_metadata="https://mcp.example.com${wellKnown}/mcp"`,
    );
    // No proxy trusted: X-Forwarded-* are not believed, the Host the client used is (it is where it reached).
    const own = await rawHttp(`${direct.url}${wellKnown}/mcp`, 'GET', {
      host: 'gateway.internal:8080',
      'x-forwarded-host': 'evil.example',
      'x-forwarded-proto': 'https',
    });
    expect(JSON.parse(own.body)).toMatchObject({ resource: 'http://gateway.internal:8080/mcp' });
    // A Host that is no host name is never written into the header or the document.
    const odd = await rawHttp(`${direct.url}/mcp`, 'POST', {
      host: 'a"b',
      'content-type': 'application/json',
    });
    expect(odd.headers['www-authenticate']).toBe(
      `Bearer resource_metadata="http://localhost${wellKnown}/mcp"`,
    );
  });

  it('answers every path under /mcp in JSON-RPC shape: one the router cannot decode, one no route serves, a method it has not', async () => {
    const { token } = await direct.teamToken('builders');
    for (const [path, method, status] of [
      ['/mcp/%ZZ', 'POST', 400],
      ['/mcp/gh/extra', 'POST', 404],
      ['/mcp/gh/extra', 'GET', 404],
      ['/mcp', 'PUT', 404],
      ['/mcp/nowhere', 'POST', 404],
    ] as const) {
      const answer = await fetch(`${direct.url}${path}`, {
        method,
        headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
        ...(method === 'GET' ? {} : { body: '{"jsonrpc":"2.0","id":1,"method":"tools/list"}' }),
      });
      expect({ path, method, status: answer.status }).toEqual({ path, method, status });
      expect(answer.headers.get('content-type')).toContain('application/json');
      expect(await answer.json()).toMatchObject({
        jsonrpc: '2.0',
        id: null,
        error: { code: -32600, message: expect.any(String) },
      });
    }
  });
});
