#!/usr/bin/env node
// Local model: the same GGUF, settings and prompt driven directly with node-llama-cpp and through the
// gateway (auth, limits, accounting, SSE relay, worker process), in the same run, alternating.
// Prints a table and writes bench/results/local-model.{json,md}. Usage: node bench/local-model.mjs [rounds]
import { spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { availableParallelism, tmpdir } from 'node:os';
import { join } from 'node:path';
import autocannon from 'autocannon';
import { request } from 'undici';
import { start, stopAll } from './lib/processes.mjs';

const root = join(import.meta.dirname, '..');
const modelPath = join(root, '.cache/models/SmolLM2-135M-Instruct.Q4_1.gguf');
const runtimeDir = join(root, 'runtimes/local');
const rounds = Number(process.argv[2] ?? 5);
const MAX_TOKENS = 128;
// The gateway's default: every core but one (see local-worker.ts); the direct run uses the same.
const THREADS = Number(process.env.THREADS ?? Math.max(1, availableParallelism() - 1));
const messages = [{ role: 'user', content: 'Write a short story about a lighthouse keeper.' }];
const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

// --- direct
const { getLlama, LlamaChat } = await import(join(runtimeDir, 'node_modules/node-llama-cpp/dist/index.js'));
const llama = await getLlama({ build: 'never', gpu: false, logLevel: 'error' });
const model = await llama.loadModel({ modelPath });
const context = await model.createContext({ sequences: 1, contextSize: 2048, threads: THREADS });
const sequence = context.getSequence();
const chat = new LlamaChat({ contextSequence: sequence }); // made once, as the worker does
async function direct() {
  const started = performance.now();
  let first = 0;
  let tokens = 0;
  await chat.generateResponse([{ type: 'user', text: messages[0].content }, { type: 'model', response: [] }], {
    maxTokens: MAX_TOKENS, temperature: 0,
    onToken: (t) => { tokens += t.length; },
    onTextChunk: () => { if (!first) first = performance.now(); },
  });
  const ended = performance.now();
  await sequence.clearHistory();
  return { ttft: first - started, tokensPerSecond: (tokens - 1) / ((ended - first) / 1000), tokens };
}

// --- through the gateway (a real process, production-like config)
// A stand-in upstream to prime the gateway's shared request path (auth, validation, limits, accounting,
// relay) with 10 s of traffic before timing, as bench/gateway.mjs primes every target: until V8 has
// optimised it, that path costs ~2 ms instead of well under one. A production gateway is always warm.
const upstream = await start(join(root, 'bench/standin-upstream.mjs'), {});
const prefix = `sy-bench-local:${Date.now()}:`;
const dir = mkdtempSync(join(tmpdir(), 'switchyard-bench-'));
const config = join(dir, 'switchyard.yaml');
writeFileSync(config, `server: { port: 0, host: 127.0.0.1 }
redis: { keyPrefix: "${prefix}" }
admin: { apiKey: bench-admin }
accessLog: false
backends:
  local: { type: local, local: { modelPath: "${modelPath}", runtimeDir: "${runtimeDir}", parallel: 1, contextSize: 2048, threads: ${THREADS} } }
  standin: { type: openai, baseUrl: "${upstream.url}/v1", apiKey: upstream-key }
models:
  smollm2: { backend: local, upstreamModel: smollm2 }
  primer: { backend: standin, upstreamModel: primer }
teams:
  bench: { models: ["*"], limits: { requestsPerMinute: 100000, tokensPerDay: 100000000 } }
`);
const gateway = spawn(process.execPath, [join(root, 'dist/main.js')], { env: { ...process.env, SWITCHYARD_CONFIG: config }, stdio: ['ignore', 'pipe', 'inherit'] });
let out = '';
const url = await new Promise((resolve, reject) => {
  gateway.stdout.on('data', (d) => {
    out += d;
    const ready = /local model ready/.test(out) && /"url":"([^"]+)"/.exec(out);
    if (ready) resolve(ready[1]);
  });
  gateway.once('exit', () => reject(new Error(out)));
});
const token = (await (await fetch(`${url}/admin/v1/teams/bench/tokens`, { method: 'POST', headers: { authorization: 'Bearer bench-admin' } })).json()).token;
async function viaGateway() {
  const started = performance.now();
  // undici's request, as in bench/gateway.mjs: fetch's web streams add ~1 ms of client time per call.
  const res = await request(`${url}/v1/chat/completions`, {
    method: 'POST',
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
    body: JSON.stringify({ model: 'smollm2', messages, max_tokens: MAX_TOKENS, temperature: 0, stream: true, stream_options: { include_usage: true } }),
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
  const ended = performance.now();
  return { ttft: first - started, tokensPerSecond: (usage.completion_tokens - 1) / ((ended - first) / 1000), tokens: usage.completion_tokens };
}

const results = { direct: [], gateway: [] };
const only = process.env.ONLY;
if (only !== 'gateway') await direct();
if (only !== 'direct') {
  const body = (stream) => JSON.stringify({ model: 'primer', messages, ...(stream ? { stream: true } : {}) });
  const headers = { authorization: `Bearer ${token}`, 'content-type': 'application/json' };
  await autocannon({ url: `${url}/v1/chat/completions`, method: 'POST', connections: 8, duration: 10, headers, requests: [{ body: body(false) }, { body: body(true) }] });
  await viaGateway(); // and the local path itself
}
for (let i = 0; i < rounds; i++) {
  if (only !== 'gateway') results.direct.push(await direct());
  if (only !== 'direct') results.gateway.push(await viaGateway());
}
if (only) {
  console.log(only, JSON.stringify(results[only].map((r) => [Math.round(r.ttft), Math.round(r.tokensPerSecond)])));
  gateway.kill('SIGTERM');
  stopAll();
  process.exit(0);
}
gateway.kill('SIGTERM');
stopAll();

const row = (name, runs) => ({
  target: name,
  ttftMs: median(runs.map((r) => r.ttft)),
  tokensPerSecond: median(runs.map((r) => r.tokensPerSecond)),
  tokens: median(runs.map((r) => r.tokens)),
});
const rows = [row('node-llama-cpp direct', results.direct), row('through Switchyard', results.gateway)];
const cost = {
  ttftAddedMs: rows[1].ttftMs - rows[0].ttftMs,
  throughputCostPercent: (1 - rows[1].tokensPerSecond / rows[0].tokensPerSecond) * 100,
};
console.table(rows.map((r) => ({ ...r, ttftMs: r.ttftMs.toFixed(1), tokensPerSecond: r.tokensPerSecond.toFixed(1) })));
console.log(`gateway path: TTFT +${cost.ttftAddedMs.toFixed(1)} ms, throughput ${cost.throughputCostPercent.toFixed(1)}% lower (median of ${rounds} alternating rounds, ${MAX_TOKENS} max tokens, ${THREADS} threads)`);
mkdirSync(join(root, 'bench/results'), { recursive: true });
writeFileSync(join(root, 'bench/results/local-model.json'), JSON.stringify({ date: new Date().toISOString(), rounds, maxTokens: MAX_TOKENS, threads: THREADS, rows, cost, raw: results }, null, 2));
writeFileSync(join(root, 'bench/results/local-model.md'), `| target | TTFT ms (p50) | tokens/s (p50) |\n|---|---|---|\n${rows.map((r) => `| ${r.target} | ${r.ttftMs.toFixed(1)} | ${r.tokensPerSecond.toFixed(1)} |`).join('\n')}\n\nGateway path: TTFT +${cost.ttftAddedMs.toFixed(1)} ms, throughput ${cost.throughputCostPercent.toFixed(1)}% lower.\n`);
process.exit(0);
