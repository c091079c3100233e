import { randomBytes } from 'node:crypto';
import Redis from 'ioredis';
import { AnthropicUpstream } from './anthropic-upstream';
import { GeminiUpstream } from './gemini-upstream';
import { run, waitForListening, writeConfig, type RunningProcess } from './gateway-process';
import { OpenAIUpstream } from './openai-upstream';
import { deletePrefix, REDIS_URL } from './test-gateway';

/** The built gateway in its own process over the stand-in upstreams, with one team and a token for it. */
export interface StandinGatewayProcess {
  gateway: RunningProcess;
  url: string;
  /** A token of the team, which may use every model and has room for any load a test sends. */
  token: string;
  adminKey: string;
  upstream: OpenAIUpstream;
  anthropic: AnthropicUpstream;
  gemini: GeminiUpstream;
  /** Kills the gateway, stops the stand-ins and deletes the run's Redis keys. */
  stop(): Promise<void>;
}

/**
 * For the suites that load the gateway as production runs it (the event-loop bound, the mutation fuzzer): the built
 * gateway (dist/main.js) in a process of its own, access log off, over an OpenAI-compatible stand-in (`echo`, `vllm-echo` taking any member as vLLM does,
 * `slow`, `embed`) and an Anthropic one (`claude-echo`) and a Gemini one (`gemini-echo`, `gemini-embed`), with the team `team` (every model, a daily quota of 10^11
 * tokens, 100 requests at once) and a token for it. `env` goes to the process (NODE_OPTIONS for a probe...).
 */
export async function startStandinGatewayProcess(
  team: string,
  env: Record<string, string> = {},
): Promise<StandinGatewayProcess> {
  const prefix = `sy-test:${randomBytes(6).toString('hex')}:`;
  const adminKey = `${team}-admin`;
  const upstream = await new OpenAIUpstream().start();
  upstream.delayMs = 1;
  const anthropic = await new AnthropicUpstream().start();
  const gemini = await new GeminiUpstream().start();
  const config = writeConfig(`
server: { port: 0, host: 127.0.0.1 }
redis: { url: "${REDIS_URL}", keyPrefix: "${prefix}" }
admin: { apiKey: ${adminKey} }
log: { level: info }
accessLog: false
backends:
  standin: { type: openai, baseUrl: "${upstream.url}", apiKey: upstream-secret-key }
  claude: { type: anthropic, baseUrl: "${anthropic.url}", apiKey: upstream-secret-key }
  google: { type: gemini, baseUrl: "${gemini.url}", apiKey: upstream-secret-key }
models:
  echo: { backend: standin, upstreamModel: echo }
  vllm-echo: { backend: standin, upstreamModel: vllm-echo } # a vLLM-like server: takes members OpenAI would refuse
  slow: { backend: standin, upstreamModel: slow }
  claude-echo: { backend: claude, upstreamModel: claude-echo }
  gemini-echo: { backend: google, upstreamModel: gemini-echo }
  embed: { backend: standin, upstreamModel: embed, kind: embedding }
  gemini-embed: { backend: google, upstreamModel: text-embedding-004, kind: embedding }
teams:
  ${team}: { models: ["*"], limits: { tokensPerDay: 100000000000, concurrentRequests: 100 } }
`);
  const gateway = run(config, env);
  const stop = async () => {
    gateway.child.kill('SIGKILL');
    await upstream.stop();
    await anthropic.stop();
    await gemini.stop();
    const redis = new Redis(REDIS_URL);
    await deletePrefix(redis, prefix);
    await redis.quit();
  };
  try {
    const url = await waitForListening(gateway.output);
    const created = await fetch(`${url}/admin/v1/teams/${team}/tokens`, {
      method: 'POST',
      headers: { authorization: `Bearer ${adminKey}` },
    });
    const { token } = (await created.json()) as { token: string };
    return { gateway, url, token, adminKey, upstream, anthropic, gemini, stop };
  } catch (error) {
    await stop();
    throw error;
  }
}
