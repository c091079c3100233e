import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { agentCli } from '../support/agent-clis';
import { BedrockUpstream } from '../support/bedrock-upstream';
import { waitForUsageRecords } from '../support/usage';
import { startTestGateway, type TestGateway } from '../support/test-gateway';

const run = promisify(execFile);
const CLAUDE = agentCli('claude');
const AWS_KEY = {
  accessKeyId: 'AKIASTANDINCLAUDECODE',
  secretAccessKey: 'standin/claude+code/secret0123456789abcd',
  sessionToken: 'IQoJb3JpZ2luX2VjEClaudeCodeStandInToken//01',
};
const CLAUDE_ON_BEDROCK = 'us.anthropic.claude-sonnet-4-5-20250929-v1:0';

/**
 * The real Claude Code CLI (pinned) pointed at the gateway with ANTHROPIC_BASE_URL, its model deployed on AWS
 * Bedrock: its Messages requests go natively to InvokeModel (signed with SigV4, betas filtered into the body), and a
 * turn where the model calls Claude Code's Read tool is run by Claude Code and its result sent back, the thinking
 * block replayed with the signature the stand-in made.
 */
describe('Claude Code through the gateway to Bedrock', () => {
  jest.setTimeout(180_000);
  let bedrock: BedrockUpstream;
  let gw: TestGateway;
  let home: string;
  let secretFile: string;
  const saved = { ...process.env };

  beforeAll(async () => {
    bedrock = await new BedrockUpstream({ keys: [AWS_KEY] }).start();
    process.env.AWS_ACCESS_KEY_ID = AWS_KEY.accessKeyId;
    process.env.AWS_SECRET_ACCESS_KEY = AWS_KEY.secretAccessKey;
    process.env.AWS_SESSION_TOKEN = AWS_KEY.sessionToken;
    gw = await startTestGateway({
      upstreamUrl: bedrock.url,
      config: {
        backends: { aws: { type: 'bedrock', region: 'us-east-1', baseUrl: bedrock.url } },
        models: {
          'claude-sonnet-4-5': { backend: 'aws', upstreamModel: CLAUDE_ON_BEDROCK, thinking: 'native' },
        },
      },
    });
    home = mkdtempSync(join(tmpdir(), 'claude-bedrock-home-'));
    secretFile = join(home, 'note.txt');
    writeFileSync(secretFile, 'the vault code is 9931\n');
  });
  afterAll(async () => {
    await gw?.close();
    await bedrock?.stop();
    process.env = saved;
    rmSync(home, { recursive: true, force: true });
  });

  it('works natively: SigV4-signed InvokeModel, Bedrock betas only, signatures survive a tool round trip', async () => {
    const { token } = await gw.teamToken('claude-code-bedrock');
    const { stdout } = await run(
      process.execPath,
      [CLAUDE, '-p', `call Read with {"file_path":"${secretFile}"}`, '--model', 'claude-sonnet-4-5'],
      {
        cwd: home,
        timeout: 150_000,
        env: {
          PATH: process.env.PATH,
          HOME: home,
          ANTHROPIC_BASE_URL: gw.url,
          ANTHROPIC_API_KEY: token,
          ANTHROPIC_SMALL_FAST_MODEL: 'claude-sonnet-4-5',
          ANTHROPIC_DEFAULT_HAIKU_MODEL: 'claude-sonnet-4-5',
          DISABLE_TELEMETRY: '1',
          DISABLE_ERROR_REPORTING: '1',
          DISABLE_AUTOUPDATER: '1',
          CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: '1',
        },
      },
    );
    expect(stdout).toContain('tool said:');
    expect(stdout).toContain('the vault code is 9931');
    expect(bedrock.crashes).toEqual([]);
    const turns = bedrock.requests.filter((r) => r.path.endsWith('/invoke-with-response-stream'));
    expect(turns.length).toBeGreaterThanOrEqual(2);
    for (const turn of turns) {
      expect(turn.path).toBe(`/model/${encodeURIComponent(CLAUDE_ON_BEDROCK)}/invoke-with-response-stream`);
      expect(turn.headers.authorization).toMatch(/^AWS4-HMAC-SHA256 Credential=AKIASTANDINCLAUDECODE\//);
      expect(turn.body.anthropic_version).toBe('bedrock-2023-05-31');
      expect(turn.body).not.toHaveProperty('model');
      expect(turn.body.anthropic_beta ?? []).not.toContain('claude-code-20250219');
    }
    expect(turns[0].body).toMatchObject({ thinking: { type: 'enabled', budget_tokens: 31999 } });
    expect(turns[0].body.anthropic_beta).toContain('interleaved-thinking-2025-05-14');
    // The turn after the tool call replays the first answer's thinking block as the stand-in signed it.
    const replay = turns.find((r) => r.body.messages.some((m: { role: string }) => m.role === 'assistant'))!;
    const assistant = replay.body.messages.find((m: { role: string }) => m.role === 'assistant');
    expect(assistant.content[0]).toMatchObject({
      type: 'thinking',
      signature: expect.stringMatching(/^sig-/),
    });
    // One record per turn the stand-in answered, each a Messages request.
    const records = await waitForUsageRecords(gw, 'claude-code-bedrock', turns.length);
    for (const record of records)
      expect(record).toMatchObject({ endpoint: 'messages', model: 'claude-sonnet-4-5', outcome: 'ok' });
  });
});
