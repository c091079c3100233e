import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { agentCli } from '../support/agent-clis';
import { AnthropicUpstream } from '../support/anthropic-upstream';
import {
  anthropicClasses,
  handCost,
  openaiClasses,
  type Classes,
  type Prices,
} from '../support/cache-classes';
import { OpenAIUpstream } from '../support/openai-upstream';
import type { RecordedRequest } from '../support/standin-server';
import { startTestGateway, type TestGateway } from '../support/test-gateway';
import { waitForUsageRecords } from '../support/usage';

const run = promisify(execFile);
const CLAUDE = agentCli('claude');

/** Claude Sonnet 4.5's published rates, by hand: the gateway prices the native deployment from the price data. */
const SONNET_45: Prices = { input: 3, cachedInput: 0.3, cacheWrite: 3.75, cacheWrite1h: 6, output: 15 };
/** The translated deployment's configured price (gpt-4.1's rates: reads at a quarter of input). */
const TRANSLATED: Prices = { input: 2, cachedInput: 0.5, output: 8 };

/**
 * The real Claude Code CLI through /v1/messages, its traffic mostly prompt-cache reads as a coding agent's is: natively
 * to Anthropic (the stand-in reporting cache_read_input_tokens and cache_creation with its 5-minute/1-hour split) and
 * translated to an OpenAI-compatible backend (reporting prompt_tokens_details.cached_tokens). Every record is priced
 * by class and equals the hand computation from the usage the vendor reported for that call, and Claude Code itself
 * reads the cache back in Anthropic's members.
 */
describe('Claude Code with prompt caching, priced by class', () => {
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
          // Each call: 30,000 cache reads, 1,200 5-minute and 800 1-hour writes, the prompt's words uncached.
          'claude-sonnet-4-5': {
            backend: 'claude',
            upstreamModel: 'claude-cached-30000-1200-800',
            thinking: 'native',
            price: { provider: 'anthropic', model: 'claude-sonnet-4-5' },
          },
          // Each call: 20,000 of its prompt tokens read from OpenAI's cache.
          'team-coder': { backend: 'standin', upstreamModel: 'cached-20000-0-0', price: TRANSLATED },
        },
      },
    });
    home = mkdtempSync(join(tmpdir(), 'claude-cache-home-'));
    secretFile = join(home, 'note.txt');
    writeFileSync(secretFile, 'the cache code is 7705\n');
  });
  afterAll(async () => {
    await gw.close();
    await Promise.all([anthropic.stop(), openai.stop()]);
    rmSync(home, { recursive: true, force: true });
  });

  /** Runs `claude -p <prompt> --output-format json` against the gateway; its JSON result. */
  async function claude(token: string, model: string, prompt: string): Promise<Record<string, any>> {
    const { stdout } = await run(
      process.execPath,
      [CLAUDE, '-p', prompt, '--model', model, '--output-format', 'json'],
      {
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
      },
    );
    return JSON.parse(stdout);
  }

  /** Every call at `path` the stand-in answered (with its usage recorded) for a prompt holding `marker`. */
  function vendorCalls(
    standIn: { requests: RecordedRequest[] },
    path: string,
    marker: string,
  ): RecordedRequest[] {
    return standIn.requests.filter((r) => r.path === path && r.text.includes(marker) && r.usage);
  }

  const sorted = (values: number[]) => [...values].sort((a, b) => a - b);
  const sum = (classes: Classes[], pick: (c: Classes) => number) => classes.reduce((n, c) => n + pick(c), 0);

  it('natively to Anthropic: records priced by class (reads, 5-minute and 1-hour writes), breakpoints passed through', async () => {
    const team = 'claude-code-cache-native';
    const { token } = await gw.teamToken(team);
    const result = await claude(token, 'claude-sonnet-4-5', `call Read with {"file_path":"${secretFile}"}`);
    expect(result.result).toContain('the cache code is 7705');
    const calls = vendorCalls(anthropic, '/v1/messages', secretFile);
    expect(calls.length).toBeGreaterThanOrEqual(2); // the tool call, then the answer to its result
    // Claude Code's cache breakpoints reached Anthropic as it wrote them.
    for (const call of calls) {
      const marked = JSON.stringify([call.body.system, call.body.messages]).match(/"cache_control"/g) ?? [];
      expect(marked.length).toBeGreaterThan(0);
    }
    const vendor = calls.map((call) => anthropicClasses(call.usage!));
    expect(vendor.every((c) => c.reads === 30_000 && c.writes5m === 1_200 && c.writes1h === 800)).toBe(true);

    const records = await waitForUsageRecords(gw, team, calls.length);
    for (const record of records)
      expect(record).toMatchObject({
        endpoint: 'messages',
        cached_tokens: 30_000,
        cache_write_tokens: 2_000,
        cache_write_1h_tokens: 800,
      });
    // (cost_estimated is true here: Anthropic does not report the thinking share of output_tokens, so the gateway
    // estimates it; at the output price, as Sonnet bills thinking, the cost does not depend on that estimate.)
    expect(sorted(records.map((r) => r.prompt_tokens))).toEqual(
      sorted(vendor.map((c) => c.uncached + c.reads + c.writes5m + c.writes1h)),
    );
    expect(sorted(records.map((r) => r.cost_nanos))).toEqual(
      sorted(vendor.map((c) => handCost(c, SONNET_45))),
    );
    // Claude Code read the vendor's cache counts from the gateway's answers (its totals over the calls).
    expect(result.usage).toMatchObject({
      input_tokens: sum(vendor, (c) => c.uncached),
      cache_read_input_tokens: sum(vendor, (c) => c.reads),
      cache_creation_input_tokens: sum(vendor, (c) => c.writes5m + c.writes1h),
      output_tokens: sum(vendor, (c) => c.output),
    });
  });

  it('translated to an OpenAI-compatible backend: cached_tokens priced as reads, shown to Claude Code as cache_read_input_tokens', async () => {
    const team = 'claude-code-cache-translated';
    const { token } = await gw.teamToken(team);
    const result = await claude(token, 'team-coder', 'say hello to the cache');
    expect(result.result).toContain('echo:');
    const calls = vendorCalls(openai, '/v1/chat/completions', 'say hello to the cache');
    expect(calls.length).toBeGreaterThanOrEqual(1);
    const vendor = calls.map((call) => openaiClasses(call.usage!));
    expect(vendor.every((c) => c.reads === 20_000)).toBe(true);

    const records = await waitForUsageRecords(gw, team, calls.length);
    for (const record of records)
      expect(record).toMatchObject({
        endpoint: 'messages',
        model: 'team-coder',
        cached_tokens: 20_000,
        cache_write_tokens: 0,
        cost_estimated: false,
      });
    expect(sorted(records.map((r) => r.prompt_tokens))).toEqual(
      sorted(vendor.map((c) => c.uncached + c.reads)),
    );
    expect(sorted(records.map((r) => r.cost_nanos))).toEqual(
      sorted(vendor.map((c) => handCost(c, TRANSLATED))),
    );
    // Anthropic's members, as Claude Code reads them: input_tokens the uncached part, the reads apart.
    expect(result.usage).toMatchObject({
      input_tokens: sum(vendor, (c) => c.uncached),
      cache_read_input_tokens: sum(vendor, (c) => c.reads),
      cache_creation_input_tokens: 0,
      output_tokens: sum(vendor, (c) => c.output),
    });
  });
});
