#!/usr/bin/env node
// The stack ladder: what each layer of Switchyard's stack costs on its own, measured in one run. Every rung is
// the floor's proxy (bench/floor-proxy.mjs: bearer check, JSON body, one upstream call, answer written back)
// with one more layer under it (bench/lib/layer-server.mjs), and the last rung is Switchyard itself. Plain
// requests at c=32 against the stand-in upstream; CPU of the server process per 1000 requests.
//   node bench/layers.mjs [--duration S] [--rounds N]   (after npm run build; needs Redis)
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import autocannon from 'autocannon';
import { request } from 'undici';
import { cpuMs, start, stopAll } from './lib/processes.mjs';
import { startBenchSwitchyard } from './lib/switchyard.mjs';

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
  ['node http + undici (the floor)', () => start(join(root, 'bench/floor-proxy.mjs'), { UPSTREAM: upstream.url, TOKEN })],
  ...[
    ['+ Express 5 (router, body-parser)', 'express'],
    ['+ Nest 11 (controller, guard) instead of a bare Express route', 'nest'],
    ['+ ValidationPipe with the real chat DTO', 'validation'],
    ['+ one Redis script per request and one XADD after it', 'redis'],
  ].map(([name, layer]) => [name, () => start(join(root, 'bench/lib/layer-server.mjs'), { LAYER: layer, UPSTREAM: upstream.url, TOKEN })]),
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
  if (check.statusCode !== 200 || answer.choices?.[0]?.message?.content === undefined) throw new Error(`${name}: ${check.statusCode} ${JSON.stringify(answer)}`);
  await autocannon({ url, method: 'POST', connections: 8, duration: 2, headers, body });
  const cpuBefore = cpuMs(server.pid);
  const result = await autocannon({ url, method: 'POST', connections: 32, duration, headers, body });
  const cpu = cpuMs(server.pid) - cpuBefore;
  server.child.kill('SIGTERM');
  await new Promise((resolve) => server.child.once('exit', resolve));
  const errors = result.errors + result.non2xx;
  return { cpuPer1000: (cpu / result.requests.total) * 1000, rps: result.requests.average, errors };
}

const runs = RUNGS.map(() => []);
for (let round = 0; round < rounds; round++) {
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
      errors: runs[i].reduce((n, r) => n + r.errors, 0),
    };
    previous = cpu;
    return row;
  }),
);
process.exit(0);
