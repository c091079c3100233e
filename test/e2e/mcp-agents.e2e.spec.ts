import { spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { agentCli } from '../support/agent-clis';
import { eventually } from '../support/eventually';
import { RemoteMcpServer } from '../support/mcp-remote-server';
import { OpenAIUpstream } from '../support/openai-upstream';
import { startTestGateway, type TestGateway } from '../support/test-gateway';

const CLAUDE = agentCli('claude');
const CODEX = agentCli('codex');
const REMOTE_TOKEN = 'remote-server-credential';

/** Runs a command with stdin closed (Codex reads a prompt from stdin when it is a pipe) and collects its output. */
function run(
  command: string,
  args: string[],
  options: { cwd: string; env: NodeJS.ProcessEnv; timeout: number },
): Promise<{ stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, {
      cwd: options.cwd,
      env: options.env,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    const timer = setTimeout(() => child.kill('SIGKILL'), options.timeout);
    child.on('close', (code) => {
      clearTimeout(timer);
      if (code === 0) resolve({ stdout, stderr });
      else reject(new Error(`exit ${code}:\n${stdout}\n${stderr.slice(0, 3000)}`));
    });
  });
}

/**
 * The real Claude Code and Codex CLIs (pinned, test/support/agent-clis) with the gateway as their MCP server, as a
 * team would configure them (docs/mcp.md#connecting-an-agent): the model (the stand-in tool-caller, through the
 * gateway too) asks for a tool of /mcp, the CLI calls it through the gateway, the remote MCP server runs it with the
 * gateway's credential, and its answer reaches the model.
 */
describe('agents calling tools through /mcp', () => {
  jest.setTimeout(240_000);
  let openai: OpenAIUpstream;
  let remote: RemoteMcpServer;
  let gw: TestGateway;
  let home: string;

  beforeAll(async () => {
    openai = await new OpenAIUpstream().start();
    remote = await new RemoteMcpServer({ token: REMOTE_TOKEN }).start();
    gw = await startTestGateway({
      upstreamUrl: openai.url,
      env: { MCP_REMOTE_TOKEN: REMOTE_TOKEN },
      config: {
        models: { 'team-coder': { backend: 'standin', upstreamModel: 'tool-caller' } },
        mcp: {
          servers: { remote: { url: remote.url, headers: { Authorization: 'Bearer ${MCP_REMOTE_TOKEN}' } } },
        },
        teams: { agents: { mcp: { servers: ['remote'], tools: ['remote__echo', 'remote__add'] } } },
      },
    });
    home = mkdtempSync(join(tmpdir(), 'mcp-agents-'));
  });
  afterAll(async () => {
    await gw.close();
    await Promise.all([openai.stop(), remote.stop()]);
    rmSync(home, { recursive: true, force: true });
  });

  async function token(name: string): Promise<string> {
    const created = await gw.admin('POST', '/admin/v1/teams/agents/tokens', { name });
    expect(created.status).toBe(201);
    return created.body.token as string;
  }

  /** The gateway's request log entry of the tool call made with the token named `name`. */
  async function loggedCall(name: string) {
    return eventually(async () => {
      const page = await gw.admin('GET', '/admin/v1/requests?team=agents&endpoint=mcp.tools%2Fcall');
      const entry = (page.body.data as Array<Record<string, any>>).find((e) => e.token.name === name);
      expect(entry).toBeDefined();
      return entry!;
    }, 5000);
  }

  it('Claude Code (--mcp-config, type http, the team token in its headers) calls a tool of the gateway', async () => {
    const key = await token('claude-code');
    const config = join(home, 'mcp.json');
    writeFileSync(
      config,
      JSON.stringify({
        mcpServers: {
          switchyard: { type: 'http', url: `${gw.url}/mcp`, headers: { Authorization: `Bearer ${key}` } },
        },
      }),
    );
    const tool = 'mcp__switchyard__remote__echo'; // Claude Code's name for the gateway's remote__echo
    const { stdout } = await run(
      process.execPath,
      [
        CLAUDE,
        '-p',
        `call ${tool} with {"text":"hello from claude"}`,
        '--model',
        'team-coder',
        '--mcp-config',
        config,
        '--strict-mcp-config',
        '--allowedTools',
        tool,
      ],
      {
        cwd: home,
        timeout: 150_000,
        env: {
          PATH: process.env.PATH,
          HOME: home,
          ANTHROPIC_BASE_URL: gw.url,
          ANTHROPIC_API_KEY: key,
          ANTHROPIC_SMALL_FAST_MODEL: 'team-coder',
          ANTHROPIC_DEFAULT_HAIKU_MODEL: 'team-coder',
          DISABLE_TELEMETRY: '1',
          DISABLE_ERROR_REPORTING: '1',
          DISABLE_AUTOUPDATER: '1',
          CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: '1',
        },
      },
    );
    // The stand-in model answers "tool said: <the tool result>": the remote server's answer came back.
    expect(stdout).toContain('tool said: hello from claude');
    expect(remote.calls).toContainEqual({ name: 'echo', arguments: { text: 'hello from claude' } });
    expect(remote.authorizations.at(-1)).toBe(`Bearer ${REMOTE_TOKEN}`);
    expect(await loggedCall('claude-code')).toMatchObject({
      model: 'remote__echo',
      status: 200,
      outcome: 'ok',
    });
  });

  it('Codex (mcp_servers with url and bearer_token_env_var) calls a tool of the gateway', async () => {
    const key = await token('codex');
    const codexHome = join(home, '.codex');
    mkdirSync(codexHome, { recursive: true });
    writeFileSync(
      join(codexHome, 'config.toml'),
      [
        'model = "team-coder"',
        'model_provider = "gateway"',
        '[model_providers.gateway]',
        'name = "Gateway"',
        `base_url = "${gw.url}/v1"`,
        'env_key = "GATEWAY_TOKEN"',
        'wire_api = "responses"',
        '[mcp_servers.switchyard]',
        `url = "${gw.url}/mcp"`,
        'bearer_token_env_var = "GATEWAY_TOKEN"',
        '',
      ].join('\n'),
    );
    const before = openai.requests.length;
    const tool = 'mcp__switchyard__remote__echo'; // Codex's name for the gateway's remote__echo
    await run(
      process.execPath,
      [
        CODEX,
        'exec',
        '--skip-git-repo-check',
        '--dangerously-bypass-approvals-and-sandbox',
        `call ${tool} with {"text":"hello from codex"}`,
      ],
      {
        cwd: home,
        timeout: 150_000,
        env: { PATH: process.env.PATH, HOME: home, CODEX_HOME: codexHome, GATEWAY_TOKEN: key },
      },
    );
    const turns = openai.requests.slice(before).filter((r) => r.path === '/v1/chat/completions');
    // Codex offered the gateway's permitted tools to the model (and no other of the remote server's).
    const offered = turns[0].body.tools.map((t: { function: { name: string } }) => t.function.name);
    expect(offered.filter((name: string) => name.startsWith('mcp__switchyard__')).sort()).toEqual([
      'mcp__switchyard__remote__add',
      'mcp__switchyard__remote__echo',
    ]);
    // The tool's answer went back to the model as the tool message.
    const toolMessage = turns.at(-1)!.body.messages.find((m: { role: string }) => m.role === 'tool');
    expect(String(toolMessage.content)).toContain('hello from codex');
    expect(remote.calls).toContainEqual({ name: 'echo', arguments: { text: 'hello from codex' } });
    expect(await loggedCall('codex')).toMatchObject({ model: 'remote__echo', status: 200, outcome: 'ok' });
  });
});
