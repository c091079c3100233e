#!/usr/bin/env node
// Where does a request's memory go? What a request allocates (V8's sampling heap profiler, freed objects counted),
// what the young generation's collections promote to the old generation, and what is allocated in the old
// generation directly (V8's pretenuring), per request, from V8's GC profiler of the main isolate
// (bench/lib/alloc-sampler.cjs); the allocations grouped by package / source file and by function. Switchyard with
// the production-like config and flags of the other benchmarks; after a warm-up, the same fixed number of requests
// twice (every answer awaited, so none is abandoned): once for the collections, once under the sampler.
//   node bench/alloc.mjs [--stream] [--requests N] [--connections N] [--log-off] [--flags "<node flags>"]
//   (after npm run build; needs Redis)
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import autocannon from 'autocannon';
import { groupOf } from './lib/call-frames.mjs';
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
const flags = args.includes('--flags')
  ? (args[args.indexOf('--flags') + 1] ?? '').split(' ').filter(Boolean)
  : [];

const dir = mkdtempSync(join(tmpdir(), 'switchyard-alloc-'));
process.env.ALLOC_PROFILE = join(dir, 'alloc.heapprofile');
const upstream = await start(join(root, 'bench/standin-upstream.mjs'), {});
const gateway = await startBenchSwitchyard({
  main: join(root, 'dist/main.js'),
  upstreamUrl: upstream.url,
  dir,
  nodeArgs: [...flags, '--require', join(root, 'bench/lib/alloc-sampler.cjs')],
  extraConfig: logOff ? 'logging: { requests: { enabled: false } }\n' : '',
});

// The gateway's stdout, from now on: the sampler's "written" (or failed) line.
let out = '';
gateway.child.stdout.on('data', (chunk) => (out += chunk));
let exited = false;
gateway.child.once('exit', () => (exited = true));
async function profileWritten() {
  const deadline = Date.now() + 60_000;
  while (!/"allocProfile"/.test(out)) {
    const failed = /"allocError":\s*("[^"]*")/.exec(out);
    if (failed) throw new Error(`the sampler failed: ${JSON.parse(failed[1])}`);
    if (exited) throw new Error('the gateway exited before the sampler wrote its profile');
    if (Date.now() > deadline) throw new Error('the sampler wrote no profile within 60 s');
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}
const signal = () => process.kill(gateway.pid, 'SIGUSR2');
const settle = () => new Promise((resolve) => setTimeout(resolve, 300));
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
await settle();
signal(); // the GC profiler starts
await settle();
const result = await load(requests);
signal(); // the GC profiler stops, the sampler starts
await settle();
const sampled = await load(requests);
signal(); // the sampler stops and writes both
await profileWritten();
stopAll();
const errors = result.errors + result.non2xx + sampled.errors + sampled.non2xx;
if (errors > 0) {
  console.error(`${errors} requests failed: the figures would not be per request`);
  process.exit(1);
}
const { gc, allocations } = JSON.parse(readFileSync(process.env.ALLOC_PROFILE, 'utf8'));

// The collections while the first load ran. A scavenge only copies, so what the old generation gained across one is
// what it promoted; what it gained between two collections was allocated there directly (pretenured objects, and
// objects too large for the young generation).
const oldUsed = (heap) =>
  heap.heapSpaceStatistics
    .filter(({ spaceName }) => spaceName === 'old_space' || spaceName === 'large_object_space')
    .reduce((sum, space) => sum + space.spaceUsedSize, 0);
let scavenges = 0;
let fullCollections = 0;
let promoted = 0;
let direct = 0;
let previousAfter;
for (const { gcType, beforeGC, afterGC } of gc.statistics) {
  if (gcType === 'Scavenge') {
    scavenges++;
    promoted += oldUsed(afterGC) - oldUsed(beforeGC);
  } else if (gcType === 'MarkSweepCompact') fullCollections++;
  if (previousAfter !== undefined) direct += Math.max(0, oldUsed(beforeGC) - previousAfter);
  previousAfter = oldUsed(afterGC);
}

// The sampled allocations, by package, build file or Node internal (call-frames.mjs), and by function.
const byOwner = new Map();
const byFunction = new Map();
let total = 0;
const add = (map, key, bytes) => map.set(key, (map.get(key) ?? 0) + bytes);
(function walk(node) {
  const { functionName, url, lineNumber } = node.callFrame;
  total += node.selfSize;
  const group = groupOf(url, root);
  add(byOwner, group, node.selfSize);
  add(byFunction, `${functionName || '(anonymous)'} ${group}:${lineNumber + 1}`, node.selfSize);
  node.children.forEach(walk);
})(allocations.head);

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
const served = result.requests.total;
const kb = (bytes) => (bytes / served / 1024).toFixed(1);
console.log(
  `${served} ${stream ? 'streamed' : 'plain'} requests at c=${connections}, twice: ` +
    `${(total / sampled.requests.total / 1024).toFixed(1)} KB allocated a request (sampled); ` +
    `${kb(promoted)} KB a request promoted by ${scavenges} scavenges, ` +
    `${kb(direct)} KB allocated in the old generation directly, ${fullCollections} full collections`,
);
console.log('By package or file:');
console.table(top(byOwner, 20));
console.log('By function:');
console.table(top(byFunction, 25));
process.exit(0);
