import { mkdtempSync } from 'node:fs';
import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Command } from 'commander';
import { ADMIN_ROUTES, urlOf, type AdminCall } from '../../src/cli/admin-routes';
import { buildProgram } from '../../src/cli/program';
import { OPERATIONS } from '../../src/openapi/openapi.document';

/** The commands that are no admin API call: the sign-in's own, and the price data (a file, from the internet). */
/** Commands that are not admin operations: signing in, local files (prices), the request log's database schema. */
const NOT_ROUTED = ['login', 'logout', 'whoami', 'prices update', 'db migrate'];

/** Every leaf command of the program, by its full name (`teams create`). */
function leafCommands(command: Command, prefix = ''): string[] {
  return command.commands.flatMap((sub) => {
    const name = `${prefix}${sub.name()}`;
    return sub.commands.length ? leafCommands(sub, `${name} `) : [name];
  });
}

/** The documented operation a call is, if any: its method, and its path against the path's template. */
function operationOf(call: AdminCall) {
  return OPERATIONS.find(
    (operation) =>
      operation.method === call.method.toLowerCase() &&
      new RegExp(`^${operation.path.replace(/\{[^}]+\}/g, '[^/]+')}$`).test(call.path),
  );
}

describe('the CLI over the admin API: one route per command', () => {
  it('routes every command but the sign-in, price and database commands, each to a documented admin API operation', () => {
    const commands = leafCommands(buildProgram());
    expect(Object.keys(ADMIN_ROUTES).sort()).toEqual(commands.filter((c) => !NOT_ROUTED.includes(c)).sort());
    for (const [name, route] of Object.entries(ADMIN_ROUTES)) {
      const call = (route as (args: string[], flags: Record<string, unknown>) => AdminCall)(['x'], {
        team: 'x',
      });
      expect([name, operationOf(call)?.path]).toEqual([name, expect.stringMatching(/^\/admin\/v1\//)]);
    }
  });

  it('escapes path segments and leaves flags not given out of the query', () => {
    const call = ADMIN_ROUTES['teams get'](['a/../b?c']);
    expect(urlOf('https://gw.example.com', call).href).toBe(
      'https://gw.example.com/admin/v1/teams/a%2F..%2Fb%3Fc',
    );
    const usage = ADMIN_ROUTES.usage([], { team: 'a', groupBy: 'model' });
    expect(urlOf('https://gw.example.com', usage).search).toBe('?team=a&groupBy=model');
  });

  describe('parsed by the real program, sent to a gateway', () => {
    let server: Server;
    let url = '';
    const seen: { method: string; url: string; authorization?: string; body: unknown }[] = [];
    let printed = '';
    const env = { ...process.env };

    beforeAll(async () => {
      server = createServer((req: IncomingMessage, res) => {
        let body = '';
        req.on('data', (chunk) => (body += chunk));
        req.on('end', () => {
          seen.push({
            method: req.method!,
            url: req.url!,
            authorization: req.headers.authorization,
            body: body ? JSON.parse(body) : undefined,
          });
          if (req.url?.startsWith('/admin/v1/teams/forbidden'))
            return void res
              .writeHead(403, { 'content-type': 'application/json' })
              .end(JSON.stringify({ error: { code: 'permission_denied', message: 'not yours' } }));
          res
            .writeHead(200, { 'content-type': 'application/json' })
            .end(JSON.stringify({ object: 'list', data: [{ ok: true }] }));
        });
      });
      await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
      url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
      process.env.XDG_CONFIG_HOME = mkdtempSync(join(tmpdir(), 'switchyard-unit-'));
      process.env.SWITCHYARD_ADMIN_KEY = 'the-admin-key';
      jest.spyOn(process.stdout, 'write').mockImplementation((text) => ((printed += String(text)), true));
    });
    afterAll(async () => {
      jest.restoreAllMocks();
      process.env = env;
      await new Promise((resolve) => server.close(resolve));
    });
    beforeEach(() => {
      seen.length = 0;
      printed = '';
    });

    const runs = (...args: string[]) => buildProgram().parseAsync(['--url', url, ...args], { from: 'user' });

    it("sends each command's flags as the route's body or query, with the credential", async () => {
      await runs('teams', 'update', 'research', '--tpm', 'none', '--rpm', '5', '--models', 'a,b');
      await runs('teams', 'update', 'research', '--meta', 'owner=ana', '--unset-meta', 'old');
      await runs('teams', 'delete', 'research', '--force');
      await runs('tokens', 'create', '--team', 'research', '--name', 'ci', '--expires-in', '60');
      await runs('tokens', 'rotate', 'tok1', '--grace', '30');
      await runs('usage', '--team', 'research', '--group-by', 'model');
      await runs('audit', '--limit', '5');
      expect(seen.map(({ method, url: path, body }) => [method, path, body])).toEqual([
        [
          'PATCH',
          '/admin/v1/teams/research',
          { models: ['a', 'b'], limits: { requestsPerMinute: 5, tokensPerMinute: null } },
        ],
        ['PATCH', '/admin/v1/teams/research', { metadata: { owner: 'ana', old: null } }],
        ['DELETE', '/admin/v1/teams/research?force=true', undefined],
        ['POST', '/admin/v1/teams/research/tokens', { name: 'ci', expiresInSeconds: 60 }],
        ['POST', '/admin/v1/tokens/tok1/rotate', { gracePeriodSeconds: 30 }],
        ['GET', '/admin/v1/usage?team=research&groupBy=model', undefined],
        ['GET', '/admin/v1/audit?limit=5', undefined],
      ]);
      expect(new Set(seen.map((call) => call.authorization))).toEqual(new Set(['Bearer the-admin-key']));
      // A list's data is what is printed.
      expect(JSON.parse(printed.split('\n]\n')[0] + '\n]')).toEqual([{ ok: true }]);
    });

    it("sends a team's MCP permissions (replaced whole) and a token's narrower MCP tools", async () => {
      await runs(
        'teams',
        'update',
        'research',
        '--mcp-servers',
        'github,notes',
        '--mcp-tools',
        'github__get_*,notes__*',
      );
      await runs('teams', 'create', 'lab', '--mcp-servers', 'github');
      await runs('teams', 'update', 'research', '--mcp-servers', 'none', '--tool-calls-per-minute', '30');
      await runs('tokens', 'create', '--team', 'research', '--mcp-tools', 'github__get_issue');
      expect(seen.map(({ method, url: path, body }) => [method, path, body])).toEqual([
        [
          'PATCH',
          '/admin/v1/teams/research',
          { mcp: { servers: ['github', 'notes'], tools: ['github__get_*', 'notes__*'] } },
        ],
        ['POST', '/admin/v1/teams', { id: 'lab', mcp: { servers: ['github'], tools: ['*'] } }],
        [
          'PATCH',
          '/admin/v1/teams/research',
          { mcp: { servers: [], tools: ['*'] }, limits: { toolCallsPerMinute: 30 } },
        ],
        ['POST', '/admin/v1/teams/research/tokens', { mcpTools: ['github__get_issue'] }],
      ]);
      await expect(runs('teams', 'update', 'research', '--mcp-tools', 'x__*')).rejects.toThrow(
        '--mcp-tools needs --mcp-servers',
      );
    });

    it("throws the gateway's refusal in its own words", async () => {
      await expect(runs('teams', 'get', 'forbidden')).rejects.toThrow('403 permission_denied: not yours');
    });

    it('stays with Redis when told --local (no call to the gateway)', async () => {
      process.env.SWITCHYARD_CONFIG = '/nonexistent/switchyard.yaml';
      await expect(runs('--local', 'teams', 'list')).rejects.toThrow();
      expect(seen).toEqual([]);
    });
  });
});
