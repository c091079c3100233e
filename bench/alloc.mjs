#!/usr/bin/env node
// Where does a request's memory go? What a request allocates (V8's sampling heap profiler, freed objects counted:
// bench/lib/alloc-sampler.cjs) and what the young generation's collections promote to the old generation
// (`--trace-gc-nvp`), per request, grouped by package / source file and by function. Switchyard with the
// production-like config and flags of the other benchmarks; a fixed number of requests (every answer awaited, so
// none is abandoned) after a warm-up. node bench/alloc.mjs [--stream] [--requests N] [--connections N] [--log-off]
// [--flags "<node flags>"]
// (after npm run build; needs Redis).
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import autocannon from 'autocannon';
import { start, stopAll } from './lib/processes.mjs';
import { startBenchSwitchyard } from './lib/switchyard.mjs';

const root = join(import.meta.dirname, '..');
const args = process.argv.slice(2);
const option = (name, fallback) => (args.includes(name) ? Number(args[args.indexOf(name) + 1]) : fallback);
const stream = args.includes('--stream');
const requests = option('--requests', 10_000);
const connections = option('--connections', 32);
// --log-off: the request log disabled (its entries wait GATHER_MS in memory before they are written).
const logOff = args.includes('--log-off');
// --flags "<node flags>": more V8 / Node flags for the gateway, after the production ones.
const flags = args.includes('--flags') ? args[args.indexOf('--flags') + 1].split(' ').filter(Boolean) : [];

const dir = mkdtempSync(join(tmpdir(), 'switchyard-alloc-'));
process.env.ALLOC_PROFILE = join(dir, 'alloc.heapprofile');
const upstream = await start(join(root, 'bench/standin-upstream.mjs'), {});
const gateway = await startBenchSwitchyard({
  main: join(root, 'dist/main.js'),
  upstreamUrl: upstream.url,
  dir,
  nodeArgs: [...flags, '--trace-gc-nvp', '--require', join(root, 'bench/lib/alloc-sampler.cjs')],
  extraConfig: logOff ? 'logging: { requests: { enabled: false } }\n' : '',
});

// The gateway's stdout, from now on: its GC trace lines and the sampler's "written" line.
let out = '';
gateway.child.stdout.on('data', (chunk) => (out += chunk));
const waitFor = async (pattern) => {
  while (!pattern.test(out)) await new Promise((resolve) => setTimeout(resolve, 50));
};
const load = (amount) =>
  autocannon({
    url: `${gateway.url}/v1/chat/completions`,
    method: 'POST',
    connections,
    amount,
    headers: { authorization: `Bearer ${gateway.token}`, 'content-type': 'application/json' },
    body: JSON.stringify({
      model: 'bench',
      messages: [{ role: 'user', content: 'Say something.' }],
      ...(stream ? { stream: true } : {}),
    }),
  });

await load(Math.min(requests, 3000));
await new Promise((resolve) => setTimeout(resolve, 500));
// First the collections alone (sampling slows requests, and a slower request has more of itself promoted), then the
// same load again under the sampler.
out = '';
const result = await load(requests);
const gcTrace = out;
process.kill(gateway.pid, 'SIGUSR2');
await new Promise((resolve) => setTimeout(resolve, 200));
const sampled = await load(requests);
process.kill(gateway.pid, 'SIGUSR2');
await waitFor(/"allocProfile"/);
stopAll();
const served = result.requests.total;
const errors = result.errors + result.non2xx + sampled.errors + sampled.non2xx;

// Scavenges while the measured requests ran: what survived them and what they promoted.
let scavenges = 0;
let promoted = 0;
let fullCollections = 0;
for (const line of gcTrace.split('\n')) {
  if (/\bgc=s\b/.test(line)) {
    scavenges++;
    promoted += Number(/\bpromoted=(\d+)/.exec(line)?.[1] ?? 0);
  } else if (/\bgc=mc\b/.test(line)) fullCollections++;
}

// The sampled allocations, by package (node_modules/<name>), build file or Node internal, and by function.
const profile = JSON.parse(readFileSync(process.env.ALLOC_PROFILE, 'utf8'));
const byOwner = new Map();
const byFunction = new Map();
let total = 0;
const add = (map, key, bytes) => map.set(key, (map.get(key) ?? 0) + bytes);
const ownerOf = (url) => {
  const path = url.replace(/^file:\/\//, '');
  const pkg = /node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(path);
  if (pkg) return pkg[1];
  if (path.startsWith(root)) return path.slice(root.length + 1);
  return path || '(V8 / native)';
};
(function walk(node) {
  const { functionName, url, lineNumber } = node.callFrame;
  total += node.selfSize;
  add(byOwner, ownerOf(url), node.selfSize);
  const file = url
    .replace(/^file:\/\//, '')
    .replace(/^.*node_modules\//, '')
    .replace(`${root}/`, '');
  add(
    byFunction,
    `${functionName || '(anonymous)'} ${file || '(V8 / native)'}:${lineNumber + 1}`,
    node.selfSize,
  );
  node.children.forEach(walk);
})(profile.head);

const perRequest = (bytes) => `${(bytes / sampled.requests.total) | 0}`;
const top = (map, n) =>
  [...map]
    .sort((a, b) => b[1] - a[1])
    .slice(0, n)
    .map(([name, bytes]) => ({
      name,
      'bytes / request': perRequest(bytes),
      share: `${((100 * bytes) / total).toFixed(1)} %`,
    }));
console.log(
  `${served} ${stream ? 'streamed' : 'plain'} requests at c=${connections}, errors ${errors}: ` +
    `${(total / sampled.requests.total / 1024).toFixed(1)} KB allocated a request (sampled), ` +
    `${(promoted / served / 1024).toFixed(1)} KB promoted a request by ${scavenges} scavenges, ` +
    `${fullCollections} full collections`,
);
console.log('By package or file:');
console.table(top(byOwner, 20));
console.log('By function:');
console.table(top(byFunction, 25));
process.exit(0);
