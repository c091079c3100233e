import { readFileSync } from 'node:fs';
import { Agent } from 'undici';
import { ChatBodyMutator } from '../fuzz/chat-body-mutator';
import { run, waitForListening, writeConfig, type RunningProcess } from '../support/gateway-process';
import { heapUsedAfterGc, inspectorUrl } from '../support/inspector';
import { OpenAIUpstream } from '../support/openai-upstream';
import { deletePrefix, REDIS_URL } from '../support/test-gateway';
import Redis from 'ioredis';
import { randomBytes } from 'node:crypto';

const BODIES = 10_000;
const CONCURRENCY = 8;
const SEED = 20261122;

function rssKb(pid: number): number {
  return Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))![1]);
}

/**
 * 10,000 seeded mutations of chat bodies against the built gateway in its own process (with a team that has
 * token limits, so every body that parses reaches the admission's estimate): no answer is a 5xx, every error is
 * OpenAI's error body, the process never dies, and its memory comes back to where it was.
 */
describe('mutation fuzzing of chat bodies', () => {
  jest.setTimeout(300_000);
  let upstream: OpenAIUpstream;
  let gateway: RunningProcess;
  let url: string;
  const prefix = `sy-test:${randomBytes(6).toString('hex')}:`;
  const redis = new Redis(REDIS_URL);

  beforeAll(async () => {
    upstream = await new OpenAIUpstream().start();
    upstream.delayMs = 1;
    const config = writeConfig(`
server: { port: 0, host: 127.0.0.1 }
redis: { url: "${REDIS_URL}", keyPrefix: "${prefix}" }
admin: { apiKey: fuzz-admin }
log: { level: info }
accessLog: false
backends:
  standin: { type: openai, baseUrl: "${upstream.url}", apiKey: upstream-secret-key }
models:
  echo: { backend: standin, upstreamModel: echo }
  slow: { backend: standin, upstreamModel: slow }
teams:
  fuzzers: { models: ["*"], limits: { tokensPerDay: 1000000000, concurrentRequests: 100 } }
`);
    gateway = run(config, { NODE_OPTIONS: '--inspect=127.0.0.1:0' });
    url = await waitForListening(gateway.output);
  });
  afterAll(async () => {
    gateway.child.kill('SIGKILL');
    await upstream.stop();
    await deletePrefix(redis, prefix);
    await redis.quit();
  });

  it(`${BODIES} bodies (seed ${SEED}): 0 responses >= 500, every 4xx in OpenAI's shape, no crash, RSS back to its start level`, async () => {
    const token = ((await (await fetch(`${url}/admin/v1/teams/fuzzers/tokens`, { method: 'POST', headers: { authorization: 'Bearer fuzz-admin' } })).json()) as { token: string }).token;
    const dispatcher = new Agent({ connections: CONCURRENCY, keepAliveTimeout: 10_000 });
    const mutator = new ChatBodyMutator(SEED);
    const statuses = new Map<number, number>();
    const problems: string[] = [];
    const send = async (body: string) => {
      const response = await fetch(`${url}/v1/chat/completions`, {
        method: 'POST',
        headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
        body,
        // @ts-expect-error undici's dispatcher option is not in the DOM fetch types
        dispatcher,
      });
      const text = await response.text();
      statuses.set(response.status, (statuses.get(response.status) ?? 0) + 1);
      if (response.status >= 500) problems.push(`${response.status} for ${body.slice(0, 300)}: ${text.slice(0, 300)}`);
      else if (response.status >= 400) {
        const error = (() => {
          try {
            return (JSON.parse(text) as { error?: Record<string, unknown> }).error;
          } catch {
            return undefined;
          }
        })();
        if (!error || Object.keys(error).sort().join() !== 'code,message,param,type') problems.push(`${response.status} not in OpenAI's shape: ${text.slice(0, 300)}`);
      }
    };
    const runBatch = async (count: number) => {
      let next = 0;
      await Promise.all(
        Array.from({ length: CONCURRENCY }, async () => {
          while (next < count) {
            next++;
            await send(mutator.next());
          }
        }),
      );
    };

    await runBatch(1000); // warm-up: the start level is a warm process's
    const inspector = inspectorUrl(gateway.output());
    const startHeap = await heapUsedAfterGc(inspector);
    const startKb = rssKb(gateway.child.pid!);
    await runBatch(BODIES);
    const endHeap = await heapUsedAfterGc(inspector);
    const endKb = rssKb(gateway.child.pid!);
    expect(problems.slice(0, 10)).toEqual([]);
    expect(gateway.child.exitCode).toBeNull();
    expect((await fetch(`${url}/health/live`)).status).toBe(200);
    // Both 2xx and 4xx happened: the fuzzer reached the backend as well as the validation.
    expect(statuses.get(200)).toBeGreaterThan(100);
    expect([...statuses.keys()].some((status) => status >= 400 && status < 500)).toBe(true);
    expect([...statuses.values()].reduce((a, b) => a + b, 0)).toBe(BODIES + 1000);
    // Memory, after a forced full GC (through the inspector) at both ends: what the 10,000 bodies left reachable
    // (a leak of 1 KB a body would be 10 MB), and the resident size, which V8 gives back more slowly.
    expect(endHeap - startHeap).toBeLessThan(4 * 1024 * 1024);
    expect(endKb - startKb).toBeLessThan(64 * 1024);
    await dispatcher.close();
  });
});
