import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { OpenAIUpstream } from '../support/openai-upstream';
import { startTestGateway, type TestGateway } from '../support/test-gateway';

const run = promisify(execFile);

/**
 * The Vercel AI SDK's default OpenAI provider (`openai('<model>')`: the Responses API) against the gateway,
 * unmodified: generateText, streamText and a tool call it executes, translated to a chat-only backend.
 */
describe('Vercel AI SDK (openai provider, Responses API)', () => {
  jest.setTimeout(60_000);
  let upstream: OpenAIUpstream;
  let gw: TestGateway;
  let token: string;

  beforeAll(async () => {
    upstream = await new OpenAIUpstream().start();
    gw = await startTestGateway({
      upstreamUrl: upstream.url,
      config: { models: { 'gpt-tools': { backend: 'standin', upstreamModel: 'tool-caller' } } },
    });
    ({ token } = await gw.teamToken('ai-sdk'));
  });
  afterAll(async () => {
    await gw.close();
    await upstream.stop();
  });

  async function aiSdk(scenario: string, model: string, prompt: string): Promise<any> {
    try {
      const { stdout } = await run(
        process.execPath,
        [join(__dirname, '../support/ai-sdk-client.mjs'), `${gw.url}/v1`, token, scenario, model, prompt],
        { timeout: 30_000 },
      );
      return JSON.parse(stdout);
    } catch (error) {
      throw new Error(
        `AI SDK failed: ${(error as { stderr?: string }).stderr ?? error}\nlast request: ${JSON.stringify(upstream.requests.at(-1)?.body)}`,
        { cause: error },
      );
    }
  }

  it('generateText', async () => {
    const result = await aiSdk('generate', 'echo', 'hello from the AI SDK');
    expect(result.text).toBe('echo: hello from the AI SDK');
    expect(result.finishReason).toBe('stop');
    expect(result.usage.outputTokens).toBe(6);
    expect(result.id).toMatch(/^resp_/);
  });

  it('streamText', async () => {
    const result = await aiSdk('stream', 'echo', 'stream these words');
    expect(result.text).toBe('echo: stream these words');
    expect(result.chunks).toBeGreaterThan(1);
    // The stand-in's words: "echo: stream these words".
    expect(result.usage.outputTokens).toBe(4);
  });

  it('a tool call the SDK executes, then the answer from its result', async () => {
    const result = await aiSdk('tool', 'gpt-tools', 'Oslo');
    expect(result.steps[0].toolCalls).toEqual([{ name: 'get_weather', input: { query: 'Oslo' } }]);
    expect(result.steps[0].toolResults).toEqual(['sunny in Oslo']);
    expect(result.text).toBe('tool said: sunny in Oslo');
  });
});
