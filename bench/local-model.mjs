#!/usr/bin/env node
// Local model: the same GGUF, settings and prompt driven directly with node-llama-cpp, through the gateway's
// worker process alone (IPC, no HTTP), through a bare HTTP server in front of that worker (the floor), and through
// the gateway (auth, limits, accounting, SSE relay, worker process), in the same run.
//
// This VM's speed drifts by tens of percent within a minute, so every figure is paired: each round runs the four
// targets back to back in a rotating order, each after a pause (so none inherits another's tail: the gateway's
// accounting and the worker's cleanup run after the client has its answer), and the cost of a path is the median
// of its per-round differences from direct. Two phases: many short calls for time to first token, then fewer
// full-length ones for tokens/s.
//
// Usage: node bench/local-model.mjs [throughput rounds = 20] [ttft rounds = 100]
// Env: THREADS (default: the gateway's, every CPU but one), PIN=0 (no CPU pinning), PAUSE_MS (100), ONLY=direct,gateway
// Writes bench/results/local-model.{json,md}.
import { fork, spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import autocannon from 'autocannon';
import { request } from 'undici';
import { start, stopAll } from './lib/processes.mjs';

const root = join(import.meta.dirname, '..');
const modelPath = join(root, '.cache/models/SmolLM2-135M-Instruct.Q4_1.gguf');
const runtimeDir = join(root, 'runtimes/local');
const throughputRounds = Number(process.argv[2] ?? 20);
const ttftRounds = Number(process.argv[3] ?? 100);
const PAUSE_MS = Number(process.env.PAUSE_MS ?? 100);
const FULL_TOKENS = 128;
const TTFT_TOKENS = 4; // the first token is all the TTFT phase needs
// The gateway's defaults (src/providers/local/cpu-placement.ts): every CPU but the first for inference, the worker
// pinned to them (the gateway is not pinned). Direct and the worker alone run in processes pinned the same way.
const { placementFor } = await import(join(root, 'dist/providers/local/cpu-placement.js'));
const THREADS = Number(process.env.THREADS ?? 0);
const PIN = process.env.PIN !== '0';
const placement = placementFor({ threads: THREADS, pinCpus: PIN });
// Two prompts: a one-line question (the worst case for the first token: the gateway's fixed cost against ~35 prompt
// tokens) and a ~400-token passage to summarise (closer to a chat request with context).
const SHORT_PROMPT = 'Write a short story about a lighthouse keeper.';
const LONG_PROMPT = `${readFileSync(join(root, 'bench/fixtures/long-prompt.txt'), 'utf8')}\nSummarise the text above in two sentences.`;
const median = (xs) => {
  const sorted = [...xs].sort((a, b) => a - b);
  const mid = sorted.length / 2;
  return sorted.length % 2 ? sorted[Math.floor(mid)] : (sorted[mid - 1] + sorted[mid]) / 2;
};
const timing = (started, first, ended, tokens) => ({
  ttft: first - started,
  tokensPerSecond: (tokens - 1) / ((ended - first) / 1000),
  tokens,
});

// --- direct: node-llama-cpp in a process of its own (bench/lib/direct-llama.mjs), pinned like the worker
const directProcess = fork(join(root, 'bench/lib/direct-llama.mjs'), [], {
  stdio: ['ignore', 'ignore', 'inherit', 'ipc'],
});
const fromDirect = () => new Promise((resolve) => directProcess.once('message', resolve));
directProcess.send({
  init: {
    runtimeDir,
    modelPath,
    threads: placement.threads,
    cpus: placement.cpus,
    pinModule: join(root, 'dist/providers/local/cpu-placement.js'),
  },
});
await fromDirect();
async function direct(maxTokens, text) {
  await sleep(PAUSE_MS);
  const result = fromDirect();
  directProcess.send({ generate: { text, maxTokens } });
  return result;
}

// --- the gateway's worker process alone: the same process boundary and protocol, no HTTP and no gateway work
const worker = fork(join(root, 'dist/providers/local/local-worker.js'), [], {
  stdio: ['ignore', 'ignore', 'ignore', 'ipc'],
  serialization: 'advanced',
});
let onWorkerMessage = () => undefined;
worker.on('message', (message) => onWorkerMessage(message));
await new Promise((resolve) => {
  onWorkerMessage = (message) => message.type === 'ready' && resolve();
  worker.send({ type: 'init', modelPath, runtimeDir, parallel: 1, contextSize: 2048, ...placement });
});
let workerRequestId = 0;
async function viaWorker(maxTokens, text) {
  await sleep(PAUSE_MS);
  return new Promise((resolve, reject) => {
    const started = performance.now();
    let first = 0;
    onWorkerMessage = (message) => {
      if (message.type === 'text' && !first) first = performance.now();
      if (message.type === 'error') reject(new Error(message.message));
      if (message.type === 'done')
        resolve(timing(started, first, performance.now(), message.completionTokens));
    };
    worker.send({
      type: 'generate',
      id: ++workerRequestId,
      messages: [{ role: 'user', content: text }],
      maxTokens,
      temperature: 0,
      thoughtBudget: 0,
    });
  });
}

// --- through the gateway (a real process, production-like config)
const upstream = await start(join(root, 'bench/standin-upstream.mjs'), {});
const prefix = `sy-bench-local:${Date.now()}:`;
const config = join(mkdtempSync(join(tmpdir(), 'switchyard-bench-')), 'switchyard.yaml');
writeFileSync(
  config,
  `server: { port: 0, host: 127.0.0.1 }
redis: { keyPrefix: "${prefix}" }
admin: { apiKey: bench-admin }
accessLog: false
backends:
  local: { type: local, local: { modelPath: "${modelPath}", runtimeDir: "${runtimeDir}", parallel: 1, contextSize: 2048, threads: ${THREADS}, pinCpus: ${PIN} } }
  standin: { type: openai, baseUrl: "${upstream.url}/v1", apiKey: upstream-key }
models:
  smollm2: { backend: local, upstreamModel: smollm2 }
  primer: { backend: standin, upstreamModel: primer }
teams:
  bench: { models: ["*"], limits: { requestsPerMinute: 100000, tokensPerDay: 100000000 } }
`,
);
const gateway = spawn(process.execPath, [join(root, 'dist/main.js')], {
  env: { ...process.env, SWITCHYARD_CONFIG: config },
  stdio: ['ignore', 'pipe', 'inherit'],
});
let out = '';
const url = await new Promise((resolve, reject) => {
  gateway.stdout.on('data', (d) => {
    out += d;
    const ready = /local model ready/.test(out) && /"url":"([^"]+)"/.exec(out);
    if (ready) resolve(ready[1]);
  });
  gateway.once('exit', () => reject(new Error(out)));
});
const token = (
  await (
    await fetch(`${url}/admin/v1/teams/bench/tokens`, {
      method: 'POST',
      headers: { authorization: 'Bearer bench-admin' },
    })
  ).json()
).token;
// --- the floor: a bare node:http server in front of the same worker (bench/lib/local-floor.mjs): the HTTP and IPC
// hops any isolated HTTP gateway pays, and nothing else
const floor = await start(
  [
    join(root, 'bench/lib/local-floor.mjs'),
    JSON.stringify({ modelPath, runtimeDir, parallel: 1, contextSize: 2048, ...placement }),
  ],
  {},
  /"url":"([^"]+)"/,
);
const viaFloor = (maxTokens, text) => streamed(floor.url, maxTokens, text);
const viaGateway = (maxTokens, text) => streamed(url, maxTokens, text);

async function streamed(baseUrl, maxTokens, text) {
  await sleep(PAUSE_MS);
  const started = performance.now();
  // undici's request, as in bench/gateway.mjs: fetch's web streams add ~1 ms of client time per call.
  const res = await request(`${baseUrl}/v1/chat/completions`, {
    method: 'POST',
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
    body: JSON.stringify({
      model: 'smollm2',
      messages: [{ role: 'user', content: text }],
      max_tokens: maxTokens,
      temperature: 0,
      stream: true,
      stream_options: { include_usage: true },
    }),
  });
  let first = 0;
  let usage;
  const decoder = new TextDecoder();
  let buffer = '';
  for await (const bytes of res.body) {
    buffer += decoder.decode(bytes, { stream: true });
    let at;
    while ((at = buffer.indexOf('\n\n')) >= 0) {
      const line = buffer.slice(0, at);
      buffer = buffer.slice(at + 2);
      if (!line.startsWith('data: ') || line === 'data: [DONE]') continue;
      const chunk = JSON.parse(line.slice(6));
      if (!first && chunk.choices[0]?.delta?.content) first = performance.now();
      if (chunk.usage) usage = chunk.usage;
    }
  }
  return timing(started, first, performance.now(), usage.completion_tokens);
}

const targets = { direct, worker: viaWorker, floor: viaFloor, gateway: viaGateway };
const names = {
  direct: 'node-llama-cpp direct',
  worker: 'worker process (IPC, no HTTP)',
  floor: 'floor: bare HTTP server + worker',
  gateway: 'through Switchyard',
};
const only = process.env.ONLY?.split(',') ?? Object.keys(targets);
if (!only.includes('direct')) throw new Error('ONLY must include direct: every figure is paired with it');
for (const name of only) await targets[name](FULL_TOKENS, SHORT_PROMPT); // warm each path once
if (only.includes('gateway')) {
  // Prime the gateway's shared request path (auth, validation, limits, accounting, relay) with 10 s of traffic to a
  // stand-in backend, as bench/gateway.mjs primes every target: until V8 has optimised it, it costs ~2 ms more.
  const body = (stream) =>
    JSON.stringify({
      model: 'primer',
      messages: [{ role: 'user', content: SHORT_PROMPT }],
      ...(stream ? { stream: true } : {}),
    });
  const headers = { authorization: `Bearer ${token}`, 'content-type': 'application/json' };
  await autocannon({
    url: `${url}/v1/chat/completions`,
    method: 'POST',
    connections: 8,
    duration: 10,
    headers,
    requests: [{ body: body(false) }, { body: body(true) }],
  });
  await viaGateway(FULL_TOKENS, SHORT_PROMPT);
}
async function phase(rounds, maxTokens, text) {
  const results = Object.fromEntries(only.map((name) => [name, []]));
  for (let i = 0; i < rounds; i++) {
    for (let k = 0; k < only.length; k++) {
      const name = only[(i + k) % only.length]; // rotate who goes first, so no target always follows the same one
      results[name].push(await targets[name](maxTokens, text));
    }
  }
  return results;
}
const ttft = await phase(ttftRounds, TTFT_TOKENS, SHORT_PROMPT);
const longRounds = Math.ceil(ttftRounds / 4);
const ttftLong = await phase(longRounds, TTFT_TOKENS, LONG_PROMPT);
const throughput = await phase(throughputRounds, FULL_TOKENS, SHORT_PROMPT);
gateway.kill('SIGTERM');
worker.kill('SIGTERM');
directProcess.kill('SIGTERM');
stopAll();

const paired = (runs, of) => runs[of].map((r, i) => ({ r, d: runs.direct[i] }));
function quantile(xs, q) {
  const sorted = [...xs].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))];
}
/** TTFT of one target in one phase: its median, and its paired cost over direct (median and middle half). */
function ttftOf(runs, name) {
  const ms = median(runs[name].map((r) => r.ttft));
  if (name === 'direct') return { ms };
  const added = paired(runs, name).map(({ r, d }) => r.ttft - d.ttft);
  return {
    ms,
    addedMs: median(added),
    addedPercent: median(paired(runs, name).map(({ r, d }) => ((r.ttft - d.ttft) / d.ttft) * 100)),
    addedIqrMs: [quantile(added, 0.25), quantile(added, 0.75)],
  };
}
const rows = only.map((name) => ({
  target: names[name],
  ttftShort: ttftOf(ttft, name),
  ttftLong: ttftOf(ttftLong, name),
  tokensPerSecond: median(throughput[name].map((r) => r.tokensPerSecond)),
  throughputCostPercent:
    name === 'direct'
      ? undefined
      : median(paired(throughput, name).map(({ r, d }) => (1 - r.tokensPerSecond / d.tokensPerSecond) * 100)),
}));
const fmt = (x, digits = 1) => (x === undefined ? '' : x.toFixed(digits));
const cost = (t) =>
  t.addedMs === undefined
    ? ''
    : `${t.addedMs >= 0 ? '+' : ''}${fmt(t.addedMs, 2)} ms (${fmt(t.addedPercent)} %)`;
console.table(
  rows.map((r) => ({
    target: r.target,
    'TTFT short ms': fmt(r.ttftShort.ms),
    added: cost(r.ttftShort),
    'added IQR ms': r.ttftShort.addedIqrMs
      ? `${fmt(r.ttftShort.addedIqrMs[0])}..${fmt(r.ttftShort.addedIqrMs[1])}`
      : '',
    'TTFT long ms': fmt(r.ttftLong.ms),
    'added ': cost(r.ttftLong),
    'tokens/s': fmt(r.tokensPerSecond),
    'tokens/s lower %': fmt(r.throughputCostPercent),
  })),
);
const pinning = placement.cpus ? `pinned to CPU ${placement.cpus.join(',')}` : 'not pinned';
const setting = `TTFT: ${ttftRounds} rounds (short prompt) and ${longRounds} (long prompt) of ${TTFT_TOKENS}-token calls; tokens/s: ${throughputRounds} rounds of ${FULL_TOKENS}-token calls; costs are medians of per-round differences from direct; ${placement.threads} inference thread(s) ${pinning}; ${PAUSE_MS} ms pause before each call`;
console.log(setting);
mkdirSync(join(root, 'bench/results'), { recursive: true });
const result = {
  date: new Date().toISOString(),
  ttftRounds,
  throughputRounds,
  threads: placement.threads,
  pinnedCpus: placement.cpus ?? null,
  pauseMs: PAUSE_MS,
  rows,
  raw: { ttft, ttftLong, throughput },
};
writeFileSync(join(root, 'bench/results/local-model.json'), JSON.stringify(result, null, 2));
writeFileSync(
  join(root, 'bench/results/local-model.md'),
  `| target | TTFT, short prompt | added | TTFT, ~400-token prompt | added | tokens/s | tokens/s lower |\n|---|---|---|---|---|---|---|\n${rows
    .map(
      (r) =>
        `| ${r.target} | ${fmt(r.ttftShort.ms)} ms | ${cost(r.ttftShort)} | ${fmt(r.ttftLong.ms)} ms | ${cost(r.ttftLong)} | ${fmt(r.tokensPerSecond)} | ${r.throughputCostPercent === undefined ? '' : `${fmt(r.throughputCostPercent)} %`} |`,
    )
    .join('\n')}\n\n${setting}.\n`,
);
process.exit(0);
