import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { agentCli } from '../support/agent-clis';
import { AnthropicUpstream } from '../support/anthropic-upstream';
import { OpenAIUpstream } from '../support/openai-upstream';
import { startTestGateway, type TestGateway } from '../support/test-gateway';
import { waitForUsageRecords } from '../support/usage';

const run = promisify(execFile);
const CLAUDE = agentCli('claude');

/**
 * The real Claude Code CLI (npm @anthropic-ai/claude-code, pinned) pointed at the gateway with ANTHROPIC_BASE_URL,
 * as a team would: natively to an Anthropic backend and translated to an OpenAI-compatible one, including a turn
 * where the model calls Claude Code's Read tool and Claude Code really runs it and sends the result back.
 */
describe('Claude Code through the gateway', () => {
  jest.setTimeout(180_000);
  let anthropic: AnthropicUpstream;
  let openai: OpenAIUpstream;
  let gw: TestGateway;
  let home: string;
  let secretFile: string;

  beforeAll(async () => {
    [anthropic, openai] = await Promise.all([new AnthropicUpstream().start(), new OpenAIUpstream().start()]);
    gw = await startTestGateway({
      upstreamUrl: openai.url,
      config: {
        backends: { claude: { type: 'anthropic', baseUrl: anthropic.url, apiKey: '${TEST_UPSTREAM_KEY}' } },
        models: {
          // A name Claude Code knows (it then sends enabled thinking, budget 31999 of max_tokens 32000).
          'claude-sonnet-4-5': { backend: 'claude', upstreamModel: 'claude-echo', thinking: 'native' },
          // A gateway alias it does not know (adaptive thinking, output_config.effort, system-role messages).
          'team-coder': { backend: 'standin', upstreamModel: 'tool-caller' },
        },
      },
    });
    home = mkdtempSync(join(tmpdir(), 'claude-home-'));
    secretFile = join(home, 'note.txt');
    writeFileSync(secretFile, 'the launch code is 4417\n');
  });
  afterAll(async () => {
    await gw.close();
    await Promise.all([anthropic.stop(), openai.stop()]);
    rmSync(home, { recursive: true, force: true });
  });

  async function claude(token: string, model: string, prompt: string): Promise<string> {
    const { stdout } = await run(process.execPath, [CLAUDE, '-p', prompt, '--model', model], {
      cwd: home,
      timeout: 150_000,
      env: {
        PATH: process.env.PATH,
        HOME: home,
        ANTHROPIC_BASE_URL: gw.url,
        ANTHROPIC_API_KEY: token,
        ANTHROPIC_SMALL_FAST_MODEL: model,
        ANTHROPIC_DEFAULT_HAIKU_MODEL: model,
        DISABLE_TELEMETRY: '1',
        DISABLE_ERROR_REPORTING: '1',
        DISABLE_AUTOUPDATER: '1',
        CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: '1',
      },
    });
    return stdout.trim();
  }

  it('works natively with an Anthropic backend: betas and thinking pass through, signatures survive a tool round trip', async () => {
    const { token } = await gw.teamToken('claude-code-native');
    const output = await claude(token, 'claude-sonnet-4-5', `call Read with {"file_path":"${secretFile}"}`);
    expect(output).toContain('tool said:');
    expect(output).toContain('the launch code is 4417');
    const turns = anthropic.requests.filter(
      (r) => r.path.startsWith('/v1/messages') && r.body.stream === true,
    );
    expect(turns[0].headers['anthropic-beta']).toMatch(/claude-code-/);
    expect(turns[0].headers['x-api-key']).toBe('upstream-secret-key');
    expect(turns[0].body).toMatchObject({
      model: 'claude-echo',
      thinking: { type: 'enabled', budget_tokens: 31999 },
    });
    // The second turn replays the first answer's thinking block as the stand-in signed it (it refuses any other).
    const replay = turns.find((r) =>
      r.body.messages.some((m: { role: string; content: unknown }) => m.role === 'assistant'),
    )!;
    const assistant = replay.body.messages.find((m: { role: string }) => m.role === 'assistant');
    expect(assistant.content[0]).toMatchObject({
      type: 'thinking',
      signature: expect.stringMatching(/^sig-/),
    });
    // One record per request Claude Code made, counted where the backend received them.
    const calls = anthropic.requests.filter((r) => r.path === '/v1/messages');
    expect(calls.length).toBeGreaterThanOrEqual(2);
    const records = await waitForUsageRecords(gw, 'claude-code-native', calls.length);
    // Counts are the backend's (only the reasoning share of the output is the gateway's estimate).
    for (const record of records)
      expect(record).toMatchObject({
        endpoint: 'messages',
        model: 'claude-sonnet-4-5',
        outcome: 'ok',
        prompt_tokens: expect.any(Number),
      });
    expect(records.every((record: { prompt_tokens: number }) => record.prompt_tokens > 0)).toBe(true);
  });

  it('works translated to an OpenAI-compatible backend, running the tool the model calls', async () => {
    const { token } = await gw.teamToken('claude-code-translated');
    const output = await claude(token, 'team-coder', `call Read with {"file_path":"${secretFile}"}`);
    // The stand-in answers "tool said: <the tool result>": the file's text came back through Claude Code's Read tool.
    expect(output).toContain('tool said:');
    expect(output).toContain('the launch code is 4417');
    const chatRequests = openai.requests.filter((r) => r.path === '/v1/chat/completions');
    const withResult = chatRequests.find((r) =>
      r.body.messages.some((m: { role: string }) => m.role === 'tool'),
    )!;
    expect(withResult).toBeDefined();
    expect(
      withResult.body.messages.find((m: { role: string }) => m.role === 'assistant').tool_calls[0].function,
    ).toMatchObject({ name: 'Read' });
    expect(chatRequests.length).toBeGreaterThanOrEqual(2);
    const records = await waitForUsageRecords(gw, 'claude-code-translated', chatRequests.length);
    for (const record of records)
      expect(record).toMatchObject({ endpoint: 'messages', model: 'team-coder', outcome: 'ok' });
  });
});
