#!/usr/bin/env node
// The stack ladder: what each layer of Switchyard's stack costs on its own, measured in one run. Every rung is
// the floor's proxy (bench/floor-proxy.mjs: bearer check, JSON body, one upstream call, answer written back)
// with one more layer under it (bench/lib/layer-server.mjs), and the last rung is Switchyard itself, every rung
// under the gateway's production V8 flags. Plain requests at c=32 against the stand-in upstream: CPU of the server
// process per 1000 requests, and its RSS at rest (one request served), at its peak under load (the warm-up's and
// the measured load's, sampled every 100 ms) and its peak over its whole life including the 2 s after the load
// (the kernel's VmHWM: when the gateway's token counter starts, autocannon having abandoned the requests in flight
// when the load ended, and an abandoned request's prompt is counted exactly). Then each rung at c=1: its p50
// latency over the upstream's own (the "added p50 at c=1" for the stack alone).
//   node bench/layers.mjs [--duration S] [--rounds N]   (after npm run build; needs Redis)
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import autocannon from 'autocannon';
import { request } from 'undici';
import { cpuMs, pct, peakRssMb, rssMb, start, stopAll } from './lib/processes.mjs';
import { PRODUCTION_NODE_ARGS, startBenchSwitchyard } from './lib/switchyard.mjs';

const root = join(import.meta.dirname, '..');
const args = process.argv.slice(2);
const option = (name, fallback) => (args.includes(name) ? Number(args[args.indexOf(name) + 1]) : fallback);
const duration = option('--duration', 8);
const rounds = option('--rounds', 2);
const TOKEN = 'layer-token';
const body = JSON.stringify({ model: 'bench', messages: [{ role: 'user', content: 'Say something.' }] });

const upstream = await start(join(root, 'bench/standin-upstream.mjs'), {});
const dir = mkdtempSync(join(tmpdir(), 'switchyard-layers-'));

const RUNGS = [
  [
    'node http + undici (the floor)',
    () =>
      start([...PRODUCTION_NODE_ARGS, join(root, 'bench/floor-proxy.mjs')], {
        UPSTREAM: upstream.url,
        TOKEN,
      }),
  ],
  ...[
    ['+ Express 5 (router, body-parser)', 'express'],
    ['+ Nest (controller, guard) instead of a bare Express route', 'nest'],
    ['+ ValidationPipe with the real chat DTO', 'validation'],
    ['+ one Redis script per request and one XADD after it', 'redis'],
  ].map(([name, layer]) => [
    name,
    () =>
      start([...PRODUCTION_NODE_ARGS, join(root, 'bench/lib/layer-server.mjs')], {
        LAYER: layer,
        UPSTREAM: upstream.url,
        TOKEN,
      }),
  ]),
  ['Switchyard (auth, limits, routing, usage, metrics, access log)', startSwitchyard],
];

function startSwitchyard() {
  return startBenchSwitchyard({ main: join(root, 'dist/main.js'), upstreamUrl: upstream.url, dir });
}

async function measure(name, launch) {
  const server = await launch();
  const headers = { authorization: `Bearer ${server.token ?? TOKEN}`, 'content-type': 'application/json' };
  const url = `${server.url}/v1/chat/completions`;
  // The answer must be the stand-in's completion, relayed whole, before anything is timed.
  const check = await request(url, { method: 'POST', headers, body });
  const answer = await check.body.json();
  if (check.statusCode !== 200 || answer.choices?.[0]?.message?.content === undefined)
    throw new Error(`${name}: ${check.statusCode} ${JSON.stringify(answer)}`);
  const restMb = rssMb(server.pid);
  let peakMb = restMb;
  const sampler = setInterval(() => {
    try {
      peakMb = Math.max(peakMb, rssMb(server.pid));
    } catch {
      // the server exited: the run fails below, on its requests
    }
  }, 100);
  // A fixed amount, every answer awaited: a warm-up cut off by a deadline abandons requests in flight, which starts
  // the gateway's token counter before the measured load (its RSS belongs to the column after the load).
  await autocannon({ url, method: 'POST', connections: 8, amount: 4000, headers, body });
  const cpuBefore = cpuMs(server.pid);
  const result = await autocannon({ url, method: 'POST', connections: 32, duration, headers, body });
  const cpu = cpuMs(server.pid) - cpuBefore;
  const loadPeakMb = peakMb;
  clearInterval(sampler);
  await new Promise((resolve) => setTimeout(resolve, 2000));
  const lifePeakMb = peakRssMb(server.pid);
  const serial = await serialP50(url, headers);
  server.child.kill('SIGTERM');
  await new Promise((resolve) => server.child.once('exit', resolve));
  const errors = result.errors + result.non2xx + serial.errors;
  return {
    cpuPer1000: (cpu / result.requests.total) * 1000,
    rps: result.requests.average,
    restMb,
    loadPeakMb,
    afterPeakMb: lifePeakMb,
    p50c1: serial.p50,
    errors,
  };
}

/** One request at a time for `duration` seconds (undici, timed to the last byte, as bench/gateway.mjs does at c=1). */
async function serialP50(url, headers) {
  const deadline = Date.now() + duration * 1000;
  const latencies = [];
  let errors = 0;
  while (Date.now() < deadline) {
    const started = performance.now();
    const res = await request(url, { method: 'POST', headers, body });
    await res.body.dump();
    if (res.statusCode !== 200) errors++;
    latencies.push(performance.now() - started);
  }
  return { p50: pct(latencies, 50), errors };
}

/** The upstream's own p50 at c=1, what every rung's added latency is measured over. */
async function directP50() {
  return (
    await serialP50(`${upstream.url}/v1/chat/completions`, {
      authorization: `Bearer ${TOKEN}`,
      'content-type': 'application/json',
    })
  ).p50;
}

const runs = RUNGS.map(() => []);
const direct = [];
for (let round = 0; round < rounds; round++) {
  direct.push(await directP50());
  for (const [i, [name, launch]] of RUNGS.entries()) runs[i].push(await measure(name, launch));
}
stopAll();

const mean = (xs) => xs.reduce((a, b) => a + b, 0) / xs.length;
const floor = mean(runs[0].map((r) => r.cpuPer1000));
let previous = 0;
console.table(
  RUNGS.map(([name], i) => {
    const cpu = mean(runs[i].map((r) => r.cpuPer1000));
    const row = {
      rung: name,
      'CPU ms/1000 req (each round)': runs[i].map((r) => r.cpuPer1000.toFixed(0)).join(' / '),
      'CPU ms/1000 req (mean)': cpu.toFixed(0),
      'this layer adds': i === 0 ? '-' : (cpu - previous).toFixed(0),
      'x floor': (cpu / floor).toFixed(2),
      'req/s': runs[i].map((r) => r.rps.toFixed(0)).join(' / '),
      'RSS MB at rest / peak under load / peak of its life, the 2 s after included (each round)': runs[i]
        .map((r) => `${r.restMb.toFixed(0)}/${r.loadPeakMb.toFixed(0)}/${r.afterPeakMb.toFixed(0)}`)
        .join(' · '),
      'c=1: p50 over direct, ms (each round)': runs[i]
        .map((r, round) => (r.p50c1 - direct[round]).toFixed(2))
        .join(' / '),
      errors: runs[i].reduce((n, r) => n + r.errors, 0),
    };
    previous = cpu;
    return row;
  }),
);
process.exit(0);
