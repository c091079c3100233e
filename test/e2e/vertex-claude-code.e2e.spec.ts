import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { agentCli } from '../support/agent-clis';
import { waitForUsageRecords } from '../support/usage';
import { startTestGateway, type TestGateway } from '../support/test-gateway';
import { VertexUpstream } from '../support/vertex-upstream';

const run = promisify(execFile);
const CLAUDE = agentCli('claude');

/**
 * The real Claude Code CLI (pinned, test/support/agent-clis) pointed at the gateway with ANTHROPIC_BASE_URL, the
 * gateway's model on Vertex AI (the stand-in, which is also the service account's token endpoint): native
 * Messages through streamRawPredict, Claude Code's first-party betas left out where Vertex would refuse the request,
 * a turn where the model calls Claude Code's Read tool and the result goes back with the thinking block signed.
 */
describe('Claude Code through the gateway to Vertex AI', () => {
  jest.setTimeout(180_000);
  let vertex: VertexUpstream;
  let gw: TestGateway;
  let home: string;
  let secretFile: string;

  beforeAll(async () => {
    vertex = await new VertexUpstream().start();
    home = mkdtempSync(join(tmpdir(), 'claude-vertex-home-'));
    secretFile = join(home, 'note.txt');
    writeFileSync(secretFile, 'the launch code is 4417\n');
    const keyDir = mkdtempSync(join(tmpdir(), 'vertex-key-'));
    gw = await startTestGateway({
      upstreamUrl: vertex.url,
      config: {
        backends: {
          vertex: {
            type: 'vertex',
            project: vertex.project,
            region: 'global',
            baseUrl: vertex.url,
            credentialsFile: vertex.writeKeyFile(keyDir),
          },
        },
        models: {
          'claude-sonnet-4-5': { backend: 'vertex', upstreamModel: 'claude-echo', thinking: 'native' },
        },
      },
    });
  });
  afterAll(async () => {
    await gw.close();
    await vertex.stop();
    rmSync(home, { recursive: true, force: true });
  });

  it('runs natively on a Claude model on Vertex, using its Read tool, signatures intact', async () => {
    const { token } = await gw.teamToken('claude-code-vertex');
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
    expect(stdout).toContain('the launch code is 4417');
    const turns = vertex.modelCalls('claude-echo').filter((r) => r.path.endsWith(':streamRawPredict'));
    expect(turns.length).toBeGreaterThanOrEqual(2);
    expect(turns[0].path).toBe(
      `/v1/projects/${vertex.project}/locations/global/publishers/anthropic/models/claude-echo:streamRawPredict`,
    );
    expect(turns[0].body).toMatchObject({
      anthropic_version: 'vertex-2023-10-16',
      thinking: { type: 'enabled', budget_tokens: expect.any(Number) },
    });
    expect(turns[0].body).not.toHaveProperty('model');
    // Claude Code's first-party betas (claude-code-*) never reach Vertex, which refuses any it does not know.
    expect(String(turns[0].headers['anthropic-beta'] ?? '')).not.toMatch(/claude-code-/);
    const replay = turns.find((r) => r.body.messages.some((m: { role: string }) => m.role === 'assistant'))!;
    const assistant = replay.body.messages.find((m: { role: string }) => m.role === 'assistant');
    expect(assistant.content[0]).toMatchObject({
      type: 'thinking',
      signature: expect.stringMatching(/^sig-/),
    });
    // One record per turn the stand-in answered, each a Messages request.
    const records = await waitForUsageRecords(gw, 'claude-code-vertex', turns.length);
    for (const record of records)
      expect(record).toMatchObject({
        endpoint: 'messages',
        model: 'claude-sonnet-4-5',
        backend: 'vertex',
        outcome: 'ok',
      });
  });
});
