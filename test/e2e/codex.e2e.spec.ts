import { spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { agentCli } from '../support/agent-clis';
import { OpenAIUpstream } from '../support/openai-upstream';
import { startTestGateway, type TestGateway } from '../support/test-gateway';
import { waitForUsageRecords } from '../support/usage';

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
      else reject(Object.assign(new Error(`exit ${code}`), { stdout, stderr }));
    });
  });
}
const CODEX = agentCli('codex');

/**
 * The real Codex CLI (npm @openai/codex, pinned) in exec mode with the gateway as a custom Responses provider:
 * translated to a chat-only backend and natively to a Responses-capable one, each including a turn where the model
 * calls Codex's shell tool and Codex runs it.
 */
describe('Codex through the gateway', () => {
  jest.setTimeout(180_000);
  let openai: OpenAIUpstream;
  let gw: TestGateway;
  let home: string;
  let secretFile: string;

  beforeAll(async () => {
    openai = await new OpenAIUpstream().start();
    gw = await startTestGateway({
      upstreamUrl: openai.url,
      config: {
        backends: {
          'openai-responses': {
            type: 'openai',
            baseUrl: openai.url,
            apiKey: '${TEST_UPSTREAM_KEY}',
            responsesApi: true,
          },
        },
        models: {
          'team-codex': { backend: 'standin', upstreamModel: 'tool-caller' },
          'native-codex': { backend: 'openai-responses', upstreamModel: 'tool-caller' },
        },
      },
    });
    home = mkdtempSync(join(tmpdir(), 'codex-home-'));
    secretFile = join(home, 'note.txt');
    writeFileSync(secretFile, 'the vault code is 9021\n');
  });
  afterAll(async () => {
    await gw.close();
    await openai.stop();
    rmSync(home, { recursive: true, force: true });
  });

  async function codex(
    token: string,
    model: string,
    prompt: string,
  ): Promise<{ stdout: string; stderr: string }> {
    const codexHome = join(home, '.codex');
    mkdirSync(codexHome, { recursive: true });
    writeFileSync(
      join(codexHome, 'config.toml'),
      [
        `model = "${model}"`,
        'model_provider = "gateway"',
        '[model_providers.gateway]',
        'name = "Gateway"',
        `base_url = "${gw.url}/v1"`,
        'env_key = "GATEWAY_TOKEN"',
        'wire_api = "responses"',
        '',
      ].join('\n'),
    );
    return run(
      process.execPath,
      [CODEX, 'exec', '--skip-git-repo-check', '--dangerously-bypass-approvals-and-sandbox', prompt],
      {
        cwd: home,
        timeout: 150_000,
        env: { PATH: process.env.PATH, HOME: home, CODEX_HOME: codexHome, GATEWAY_TOKEN: token },
      },
    );
  }

  it('answers through a chat-only backend, running the shell command the model calls', async () => {
    const { token } = await gw.teamToken('codex-translated');
    let output: { stdout: string; stderr: string };
    try {
      output = await codex(token, 'team-codex', `call exec_command with {"cmd":"cat ${secretFile}"}`);
    } catch (error) {
      throw new Error(
        `codex failed: ${JSON.stringify(error).slice(0, 3000)}\n${JSON.stringify(openai.requests.map((r) => r.body)).slice(0, 3000)}`,
        { cause: error },
      );
    }
    // The stand-in answers "tool said: <the tool output>": the file's text came back through Codex's exec_command.
    expect(output.stdout).toContain('tool said:');
    expect(output.stdout).toContain('the vault code is 9021');
    const turns = openai.requests.filter((r) => r.path === '/v1/chat/completions');
    expect(turns.length).toBeGreaterThanOrEqual(2);
    // Codex's namespace tools are flattened for the chat backend; its hosted web_search is left out.
    const names = turns[0].body.tools.map((t: { function: { name: string } }) => t.function.name);
    expect(names).toEqual(expect.arrayContaining(['exec_command', 'multi_agent_v1__spawn_agent']));
    expect(turns[0].body.tools.every((t: { type: string }) => t.type === 'function')).toBe(true);
    const replay = turns.at(-1)!.body.messages;
    expect(replay.find((m: { role: string }) => m.role === 'tool').content).toContain(
      'the vault code is 9021',
    );
    // One record per request Codex made, counted where the backend received them.
    const records = await waitForUsageRecords(gw, 'codex-translated', turns.length);
    for (const record of records)
      expect(record).toMatchObject({ endpoint: 'responses', model: 'team-codex', outcome: 'ok' });
  });

  it('works natively with a Responses-capable backend: its request passes through, hosted tools included', async () => {
    const { token } = await gw.teamToken('codex-native');
    const before = openai.requests.length;
    const output = await codex(token, 'native-codex', `call exec_command with {"cmd":"cat ${secretFile}"}`);
    expect(output.stdout).toContain('tool said:');
    expect(output.stdout).toContain('the vault code is 9021');
    const turns = openai.requests.slice(before).filter((r) => r.path === '/v1/responses');
    expect(turns.length).toBeGreaterThanOrEqual(2);
    // What Codex sends, as it sent it: store false, its own include, namespace and hosted tools.
    expect(turns[0].body).toMatchObject({
      model: 'tool-caller',
      store: false,
      stream: true,
      include: expect.arrayContaining(['reasoning.encrypted_content']),
    });
    expect(turns[0].body.tools.map((t: { type: string }) => t.type)).toEqual(
      expect.arrayContaining(['function', 'namespace', 'web_search']),
    );
    const result = turns
      .at(-1)!
      .body.input.find((item: { type?: string }) => item.type === 'function_call_output');
    expect(JSON.stringify(result.output)).toContain('the vault code is 9021');
    const records = await waitForUsageRecords(gw, 'codex-native', turns.length);
    for (const record of records)
      expect(record).toMatchObject({
        endpoint: 'responses',
        model: 'native-codex',
        outcome: 'ok',
        estimated: false,
      });
  });
});
