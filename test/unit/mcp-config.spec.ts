import { ConfigError } from '../../src/config/config.loader';
import { buildConfig } from '../support/config';

const minimal = { admin: { apiKey: 'k' } };

function problemsOf(raw: object, env: Record<string, string> = {}): string[] {
  try {
    buildConfig({ ...minimal, ...raw }, env);
    return [];
  } catch (error) {
    if (!(error instanceof ConfigError)) throw error;
    return error.message.split('\n  - ').slice(1);
  }
}

describe('mcp.servers in the config', () => {
  it('a remote server with ${ENV} credentials in its headers, and a local one with its command, args and env', () => {
    const config = buildConfig(
      {
        ...minimal,
        mcp: {
          servers: {
            github: {
              url: 'https://mcp.example.com/mcp',
              headers: { Authorization: 'Bearer ${GITHUB_TOKEN}' },
            },
            notes: { command: 'node', args: ['server.js'], env: { NOTES_DIR: '/srv' }, timeoutMs: 2000 },
          },
        },
        teams: { a: { mcp: { servers: ['github'] } } },
      },
      { GITHUB_TOKEN: 'ghp_secret' },
    );
    expect(config.mcp.servers.github).toMatchObject({
      url: 'https://mcp.example.com/mcp',
      headers: { Authorization: 'Bearer ghp_secret' },
      timeoutMs: 10_000,
    });
    expect(config.mcp.servers.notes).toMatchObject({ command: 'node', args: ['server.js'], timeoutMs: 2000 });
    expect(config.teams.a.mcp).toMatchObject({ servers: ['github'], tools: ['*'] });
    expect(buildConfig(minimal, {}).mcp.servers).toEqual({});
  });

  it('names the key of each mistake, and never echoes a header value', () => {
    const headerValue = problemsOf({
      mcp: {
        servers: { x: { url: 'https://x.example/mcp', headers: { Authorization: ['s3cret'] } } },
      },
    });
    expect(headerValue).toEqual(['mcp.servers.x.headers.Authorization: must be a string']);
    expect(
      problemsOf(
        {
          mcp: {
            servers: {
              both: { url: 'https://x.example/mcp', command: 'node' },
              neither: { timeoutMs: 5000 },
              has__sep: { command: 'node' },
              local: { command: 'node', headers: { Authorization: 'Bearer s3cret' } },
              bad: { url: 'not a url', timeoutMs: 10, extra: 1 },
              secret: { url: 'https://x.example/mcp', headers: { Authorization: '${MISSING_TOKEN}' } },
              userinfo: { url: 'https://someone:pa55word@x.example/mcp' },
            },
          },
          teams: { a: { mcp: { servers: ['github'] } } },
        },
        {},
      ),
    ).toEqual([
      'mcp.servers.secret.headers.Authorization: environment variable MISSING_TOKEN is not set',
      'mcp.servers.bad.extra: property extra should not exist',
      'mcp.servers.bad.url: must be a URL address',
      'mcp.servers.bad.timeoutMs: must not be less than 100',
      'mcp.servers.both: give either url (remote) or command (local, stdio), not both',
      'mcp.servers.neither: one of url (remote) or command (local, stdio) is required',
      'mcp.servers.has__sep: the id must be letters, digits and - (up to 32; it prefixes tool names)',
      'mcp.servers.local.headers: only for a remote server (url)',
      'mcp.servers.userinfo.url: credentials in the url (user:password@) cannot be sent; put them in headers (Authorization: Basic <base64 of user:password>)',
      'teams.a.mcp.servers: unknown MCP server "github" (known: both, neither, has__sep, local, bad, secret, userinfo)',
    ]);
  });

  it("a team's tool globs must be globs that can match a tool of its servers", () => {
    const servers = { github: { url: 'https://x.example/mcp' } };
    expect(
      problemsOf({
        mcp: { servers },
        teams: {
          a: { mcp: { servers: ['github'], tools: ['github__get_*', '*__read_*', 'gh__*', 'get_issue'] } },
          b: { mcp: { servers: ['github'], tools: ['github__*, notes__*'] } },
        },
      }),
    ).toEqual([
      'teams.a.mcp.tools: "gh__*" matches no tool of its servers: "gh" is not one of the team\'s MCP servers',
      'teams.a.mcp.tools: "get_issue" matches no tool of its servers: tools are named <server>__<tool>, so it names none',
      'teams.b.mcp.tools: "github__*, notes__*" has whitespace, a comma or a control character',
    ]);
  });
});
