import { readFileSync } from 'node:fs';
import { Agent } from 'undici';
import { EmbeddingsBodyMutator, MessagesBodyMutator, ResponsesBodyMutator } from '../fuzz/api-body-mutators';
import type { BodyMutator } from '../fuzz/body-mutator';
import { ChatBodyMutator } from '../fuzz/chat-body-mutator';
import type { RunningProcess } from '../support/gateway-process';
import { heapUsedAfterGc, inspectorUrl } from '../support/inspector';
import { startStandinGatewayProcess, type StandinGatewayProcess } from '../support/standin-gateway-process';

const BODIES = 10_000;
const WARM_UP = 250;
const CONCURRENCY = 8;
const SEED = 20261122;

interface Api {
  name: string;
  mutator: (seed: number) => BodyMutator;
  /** The route of the i-th body (Messages alternates with count_tokens). */
  path: (i: number) => string;
  /** The stand-ins (beyond the OpenAI-compatible one) its bodies must reach. */
  reaches: Array<'anthropic' | 'gemini'>;
  /** Whose error body a 4xx must be: OpenAI's `{error: {message, type, param, code}}` or Anthropic's. */
  errors: 'openai' | 'anthropic';
}

/**
 * The models bodies name, one per family's backend: OpenAI-compatible, Anthropic and Gemini (translations are where
 * a wrong shape turns into a 500). The bodies are split between them, not multiplied by them.
 */
const CHAT_MODELS = ['echo', 'claude-echo', 'gemini-echo'];

const APIS: Api[] = [
  {
    name: 'chat completions',
    mutator: (seed) => new ChatBodyMutator(seed, CHAT_MODELS),
    path: () => '/v1/chat/completions',
    reaches: ['anthropic', 'gemini'],
    errors: 'openai',
  },
  {
    name: 'Anthropic messages and count_tokens',
    mutator: (seed) => new MessagesBodyMutator(seed, CHAT_MODELS), // claude-echo: native
    path: (i) => (i % 3 === 2 ? '/v1/messages/count_tokens' : '/v1/messages'),
    reaches: ['anthropic', 'gemini'],
    errors: 'anthropic',
  },
  {
    name: 'responses',
    mutator: (seed) => new ResponsesBodyMutator(seed, CHAT_MODELS),
    path: () => '/v1/responses',
    reaches: ['anthropic', 'gemini'],
    errors: 'openai',
  },
  {
    name: 'embeddings',
    mutator: (seed) => new EmbeddingsBodyMutator(seed, ['embed', 'gemini-embed', 'echo']),
    path: () => '/v1/embeddings',
    reaches: ['gemini'],
    errors: 'openai',
  },
];

function rssKb(pid: number): number {
  return Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))![1]);
}

/** What is wrong with a 4xx body for its API's error shape, or null. */
function shapeProblem(errors: Api['errors'], text: string): string | null {
  let body: Record<string, any>;
  try {
    body = JSON.parse(text) as Record<string, any>;
  } catch {
    return 'not JSON';
  }
  if (errors === 'openai') {
    const error = body?.error as Record<string, unknown> | undefined;
    if (
      !error ||
      Object.keys(body).join() !== 'error' ||
      Object.keys(error).sort().join() !== 'code,message,param,type'
    )
      return "not in OpenAI's shape";
    return typeof error.message === 'string' && typeof error.type === 'string'
      ? null
      : "not in OpenAI's shape";
  }
  const error = body?.error as Record<string, unknown> | undefined;
  if (body?.type !== 'error' || !error || Object.keys(error).sort().join() !== 'message,type')
    return "not in Anthropic's shape";
  if (Object.keys(body).some((key) => !['type', 'error', 'request_id'].includes(key)))
    return "not in Anthropic's shape";
  return typeof error.type === 'string' && typeof error.message === 'string'
    ? null
    : "not in Anthropic's shape";
}

/**
 * 10,000 seeded mutations of each client API's bodies (chat completions; Anthropic's Messages, a third of them to
 * count_tokens, translated and native; Responses; embeddings) against the built gateway in its own process, with a
 * team that has token limits (so every body that parses reaches the admission's estimate): no answer is a 5xx,
 * every error is in its API's own shape, the process never dies, and its memory comes back to where it was.
 */
describe('mutation fuzzing of every client API', () => {
  jest.setTimeout(600_000);
  let standin: StandinGatewayProcess;
  let gateway: RunningProcess;
  let url: string;
  let token: string;
  let startHeap: number;
  let startKb: number;
  const dispatcher = new Agent({ connections: CONCURRENCY, keepAliveTimeout: 10_000 });

  beforeAll(async () => {
    standin = await startStandinGatewayProcess('fuzzers', { NODE_OPTIONS: '--inspect=127.0.0.1:0' });
    ({ gateway, url, token } = standin);
    // Warm-up, every API: the start level is a warm process's.
    for (const api of APIS) await fuzz(api, api.mutator(SEED - 1), WARM_UP);
    startHeap = await heapUsedAfterGc(inspectorUrl(gateway.output()));
    startKb = rssKb(gateway.child.pid!);
  });

  afterAll(async () => {
    await dispatcher.close();
    await standin?.stop();
  });

  /** Sends `count` bodies of `api` from `mutator`, CONCURRENCY at a time; the statuses seen and what was wrong. */
  async function fuzz(
    api: Api,
    mutator: BodyMutator,
    count: number,
  ): Promise<{ statuses: Map<number, number>; problems: string[] }> {
    const statuses = new Map<number, number>();
    const problems: string[] = [];
    let next = 0;
    const send = async (i: number, body: string) => {
      const path = api.path(i);
      const response = await fetch(`${url}${path}`, {
        method: 'POST',
        headers: {
          authorization: `Bearer ${token}`,
          'content-type': 'application/json',
          'anthropic-version': '2023-06-01',
        },
        body,
        dispatcher,
      });
      const text = await response.text();
      statuses.set(response.status, (statuses.get(response.status) ?? 0) + 1);
      if (response.status >= 500)
        problems.push(`${response.status} on ${path} for ${body.slice(0, 300)}: ${text.slice(0, 300)}`);
      else if (response.status >= 400) {
        const problem = shapeProblem(api.errors, text);
        if (problem) problems.push(`${response.status} on ${path} ${problem}: ${text.slice(0, 300)}`);
      }
    };
    await Promise.all(
      Array.from({ length: CONCURRENCY }, async () => {
        while (next < count) {
          const i = next++;
          await send(i, mutator.next());
        }
      }),
    );
    return { statuses, problems };
  }

  it.each(APIS.map((api, index) => [api.name, api, index] as const))(
    `${BODIES} bodies of %s (seed ${SEED} + API): 0 responses >= 500, every 4xx in the API's own error shape, no crash`,
    async (_name, api, index) => {
      const { anthropic, gemini } = standin;
      const called = () => ({ anthropic: anthropic.requests.length, gemini: gemini.requests.length });
      const before = called();
      const { statuses, problems } = await fuzz(api, api.mutator(SEED + index), BODIES);
      const after = called();
      expect(problems.slice(0, 10)).toEqual([]);
      expect([...anthropic.crashes, ...gemini.crashes].slice(0, 10)).toEqual([]);
      expect(gateway.child.exitCode).toBeNull();
      expect((await fetch(`${url}/health/live`)).status).toBe(200);
      // Both 2xx and 4xx happened: the fuzzer reached the backend as well as the validation.
      expect(statuses.get(200)).toBeGreaterThan(100);
      expect([...statuses.keys()].some((status) => status >= 400 && status < 500)).toBe(true);
      expect([...statuses.values()].reduce((a, b) => a + b, 0)).toBe(BODIES);
      // Through the translations too: a share of the bodies reached the Anthropic and Gemini stand-ins.
      for (const family of api.reaches) expect(after[family] - before[family]).toBeGreaterThan(100);
    },
  );

  it('memory comes back: the JS heap after a forced full GC, and the resident size', async () => {
    // After a forced full GC (through the inspector) at both ends: what the 40,000 bodies left reachable (a leak of
    // 100 bytes a body would be 4 MB), and the resident size, which V8 gives back more slowly.
    const endHeap = await heapUsedAfterGc(inspectorUrl(gateway.output()));
    expect(endHeap - startHeap).toBeLessThan(4 * 1024 * 1024);
    expect(rssKb(gateway.child.pid!) - startKb).toBeLessThan(64 * 1024);
  });
});
