import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import Anthropic from '@anthropic-ai/sdk';
import OpenAI from 'openai';
import { agentCli } from '../support/agent-clis';
import { OpenAIUpstream } from '../support/openai-upstream';
import { startTestGateway, type TestGateway } from '../support/test-gateway';

const run = promisify(execFile);
const CLAUDE = agentCli('claude');

/**
 * A model that is configured but cannot be served as configured (its backend needs a key and has none) gets an
 * answer no client retries, in each API's own permission shape, naming the variable the operator must set. The
 * SDKs run with their default retries (2) and a fetch that counts what they send.
 */
describe('a model whose vendor key is missing', () => {
  jest.setTimeout(120_000);
  let upstream: OpenAIUpstream;
  let gw: TestGateway;
  let token: string;
  let sent = 0;
  const counting: typeof fetch = (input, init) => {
    sent++;
    return fetch(input, init);
  };

  beforeAll(async () => {
    upstream = await new OpenAIUpstream().start();
    gw = await startTestGateway({
      upstreamUrl: upstream.url,
      config: {
        backends: {
          anthropic: {
            type: 'anthropic',
            baseUrl: 'https://api.anthropic.com/v1',
            apiKey: '${SWITCHYARD_TEST_UNSET_ANTHROPIC_KEY:-}',
          },
          gemini: {
            type: 'gemini',
            baseUrl: 'https://generativelanguage.googleapis.com/v1beta',
            apiKey: '${SWITCHYARD_TEST_UNSET_GEMINI_KEY:-}',
          },
        },
        models: {
          'claude-sonnet-4-5': {
            backend: 'anthropic',
            upstreamModel: 'claude-sonnet-4-5',
            thinking: 'native',
          },
          'team-claude': { backend: 'anthropic', upstreamModel: 'claude-sonnet-4-5' }, // a name the SDK has no deprecation notice for
          'gemini-embedding-001': {
            backend: 'gemini',
            upstreamModel: 'gemini-embedding-001',
            kind: 'embedding',
          },
        },
      },
    });
    ({ token } = await gw.teamToken('keyless'));
  });
  afterAll(async () => {
    await gw.close();
    await upstream.stop();
  });
  beforeEach(() => {
    sent = 0;
  });

  const openai = () => new OpenAI({ apiKey: token, baseURL: `${gw.url}/v1`, fetch: counting }); // default maxRetries: 2
  const anthropic = () => new Anthropic({ apiKey: token, baseURL: gw.url, fetch: counting }); // default maxRetries: 2

  it.each([
    [
      'chat completions',
      () =>
        openai().chat.completions.create({
          model: 'team-claude',
          messages: [{ role: 'user', content: 'hi' }],
        }),
    ],
    [
      'a streamed chat completion',
      () =>
        openai().chat.completions.create({
          model: 'team-claude',
          stream: true,
          messages: [{ role: 'user', content: 'hi' }],
        }),
    ],
    ['responses', () => openai().responses.create({ model: 'team-claude', input: 'hi' })],
    ['embeddings', () => openai().embeddings.create({ model: 'gemini-embedding-001', input: 'hi' })],
    // Not listed, but configured: the same 403, not a 404 that says the model does not exist.
    ['models.retrieve', () => openai().models.retrieve('team-claude')],
  ])('openai SDK, %s: PermissionDeniedError once, not retried, naming the variable', async (_api, call) => {
    const error = (await (call as () => Promise<unknown>)().catch((e: unknown) => e)) as InstanceType<
      typeof OpenAI.APIError
    >;
    expect(error).toBeInstanceOf(OpenAI.PermissionDeniedError);
    expect(error.status).toBe(403);
    expect(error.code).toBe('model_unavailable');
    expect(error.message).toMatch(/SWITCHYARD_TEST_UNSET_(ANTHROPIC|GEMINI)_KEY/);
    expect(sent).toBe(1);
  });

  it.each([
    [
      'messages',
      () =>
        anthropic().messages.create({
          model: 'team-claude',
          max_tokens: 64,
          messages: [{ role: 'user', content: 'hi' }],
        }),
    ],
    [
      'a streamed message',
      async () => {
        for await (const event of await anthropic().messages.create({
          model: 'team-claude',
          max_tokens: 64,
          stream: true,
          messages: [{ role: 'user', content: 'hi' }],
        }))
          void event;
      },
    ],
    [
      'count_tokens',
      () =>
        anthropic().messages.countTokens({
          model: 'team-claude',
          messages: [{ role: 'user', content: 'hi' }],
        }),
    ],
  ])(
    '@anthropic-ai/sdk, %s: PermissionDeniedError (permission_error) once, not retried, naming the variable',
    async (_api, call) => {
      const error = (await (call as () => Promise<unknown>)().catch((e: unknown) => e)) as InstanceType<
        typeof Anthropic.APIError
      >;
      expect(error).toBeInstanceOf(Anthropic.PermissionDeniedError);
      expect(error.status).toBe(403);
      expect((error.error as { error?: { type?: string } }).error?.type).toBe('permission_error');
      expect(error.message).toMatch(/SWITCHYARD_TEST_UNSET_ANTHROPIC_KEY/);
      expect(sent).toBe(1);
    },
  );

  it('Claude Code stops at once and prints the variable to set, instead of retrying an "overload"', async () => {
    const home = mkdtempSync(join(tmpdir(), 'claude-keyless-'));
    const logsBefore = gw.logs.length;
    const started = Date.now();
    try {
      const failure = (await run(
        process.execPath,
        [CLAUDE, '-p', 'Say hello', '--model', 'claude-sonnet-4-5'],
        {
          cwd: home,
          timeout: 100_000,
          env: {
            PATH: process.env.PATH,
            HOME: home,
            ANTHROPIC_BASE_URL: gw.url,
            ANTHROPIC_API_KEY: token,
            ANTHROPIC_SMALL_FAST_MODEL: 'claude-sonnet-4-5',
            DISABLE_TELEMETRY: '1',
            DISABLE_ERROR_REPORTING: '1',
            DISABLE_AUTOUPDATER: '1',
            CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: '1',
          },
        },
      ).catch((e: unknown) => e)) as { stdout: string; code: number };
      expect(failure.code).not.toBe(0);
      expect(failure.stdout).toMatch(/403/);
      expect(failure.stdout).toMatch(/SWITCHYARD_TEST_UNSET_ANTHROPIC_KEY/);
      // It asked once (a 503 overloaded_error was retried for minutes).
      const asked = gw.logs
        .slice(logsBefore)
        .filter((l) => l.type === 'access' && String(l.path).startsWith('/v1/messages'));
      expect(asked).toHaveLength(1);
      expect(asked[0]).toMatchObject({ status: 403, error: 'model_unavailable' });
      expect(Date.now() - started).toBeLessThan(60_000);
    } finally {
      rmSync(home, { recursive: true, force: true });
    }
  });
});
