#!/usr/bin/env node
// Where does a request's CPU go? Runs the stand-in upstream and Switchyard (production-like config, as in
// bench/gateway.mjs) under `node --cpu-prof`, loads it with autocannon, and prints self time grouped by
// package / source file, then the top functions. node bench/profile.mjs [--stream] [--duration S]
// [--chunks N] [--connections N] [--big] [--log-off] (after npm run build; needs Redis). The raw .cpuprofile is kept for Chrome DevTools.
import { mkdtempSync, readdirSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import autocannon from 'autocannon';
import { groupOf } from './lib/call-frames.mjs';
import { start, stopAll } from './lib/processes.mjs';
import { startBenchSwitchyard } from './lib/switchyard.mjs';

const root = join(import.meta.dirname, '..');
const args = process.argv.slice(2);
const stream = args.includes('--stream');
// --big: each request carries a ~100k-token prompt (the big-prompt scenario of npm run bench).
const big = args.includes('--big');
const duration = args.includes('--duration') ? Number(args[args.indexOf('--duration') + 1]) : 10;
// --chunks N: streams of N chunks (the stand-in's bench-N model), to see what a relayed chunk costs.
const chunks = args.includes('--chunks') ? Number(args[args.indexOf('--chunks') + 1]) : undefined;
// --log-off: the request log disabled, to compare what its writes cost the Redis client (charged to ioredis).
const logOff = args.includes('--log-off');
// --connections N: concurrent connections (32 by default; 1 is the big-prompt scenario's one request at a time).
const connections = args.includes('--connections') ? Number(args[args.indexOf('--connections') + 1]) : 32;

const dir = mkdtempSync(join(tmpdir(), 'switchyard-profile-'));
const upstream = await start(join(root, 'bench/standin-upstream.mjs'), {});
const gateway = await startBenchSwitchyard({
  main: join(root, 'dist/main.js'),
  upstreamUrl: upstream.url,
  dir,
  upstreamModel: chunks ? `bench-${chunks}` : 'bench',
  nodeArgs: ['--cpu-prof', '--cpu-prof-dir', dir],
  extraConfig: logOff ? 'logging: { requests: { enabled: false } }\n' : '',
});
const { token } = gateway;
const load = (seconds) =>
  autocannon({
    url: `${gateway.url}/v1/chat/completions`,
    method: 'POST',
    connections,
    duration: seconds,
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
    body: JSON.stringify({
      model: 'bench',
      messages: [
        {
          role: 'user',
          content: big
            ? 'The quick brown fox jumps over the lazy dog near the riverbank today. '.repeat(7150)
            : 'Say something.',
        },
      ],
      ...(stream ? { stream: true } : {}),
    }),
  });
const result = await load(duration);
console.log(
  `${result.requests.total} requests, ${result.requests.average} req/s, errors ${result.errors + result.non2xx}`,
);
gateway.child.kill('SIGTERM');
await new Promise((r) => gateway.child.once('exit', r));
stopAll();

const file = readdirSync(dir).find((f) => f.endsWith('.cpuprofile'));
const profile = JSON.parse(readFileSync(join(dir, file), 'utf8'));
const byId = new Map(profile.nodes.map((n) => [n.id, n]));
const selfUs = new Map();
// Boot (module loading, the tokenizer tables) is not a request's cost: count from the first sample in the pipeline.
let loaded = false;
for (let i = 0; i < profile.samples.length; i++) {
  loaded ||= byId.get(profile.samples[i]).callFrame.url.includes('/dist/gateway/');
  if (loaded)
    selfUs.set(profile.samples[i], (selfUs.get(profile.samples[i]) ?? 0) + (profile.timeDeltas[i] ?? 0));
}
const groups = new Map();
const fns = new Map();
let total = 0;
for (const [id, us] of selfUs) {
  const node = byId.get(id);
  const name = node.callFrame.functionName || '(anonymous)';
  if (name === '(idle)' || name === '(program)') continue;
  total += us;
  const group = groupOf(node.callFrame.url, root);
  groups.set(group, (groups.get(group) ?? 0) + us);
  const key = `${name} ${group}:${node.callFrame.lineNumber + 1}`;
  fns.set(key, (fns.get(key) ?? 0) + us);
}
const show = (map, n) =>
  [...map]
    .sort((a, b) => b[1] - a[1])
    .slice(0, n)
    .map(
      ([k, us]) =>
        `${((us / total) * 100).toFixed(1).padStart(5)}%  ${(us / 1000).toFixed(0).padStart(6)} ms  ${k}`,
    )
    .join('\n');
// Groups -> the layers docs/performance.md talks about.
const LAYERS = [
  ['HTTP server, sockets and syscalls (node:)', (g) => g.startsWith('node:') || g === '(native / gc / idle)'],
  [
    'Express, router, body-parser',
    (g) =>
      /^(express|router|body-parser|raw-body|type-is|content-type|parseurl|on-headers|on-finished|finalhandler|iconv-lite|mime-types|media-typer|debug|forwarded|path-to-regexp|proxy-addr|depd|statuses|vary)$/.test(
        g,
      ),
  ],
  ['Nest (core, common, rxjs)', (g) => /^(@nestjs\/|rxjs|reflect-metadata)/.test(g)],
  ['validation (class-validator, class-transformer)', (g) => /^class-(validator|transformer)$/.test(g)],
  ['upstream HTTP client (undici + llhttp wasm)', (g) => g === 'undici' || g.startsWith('wasm:')],
  [
    'Redis client (ioredis)',
    (g) => /^(ioredis|redis-parser|denque|cluster-key-slot|standard-as-callback|@ioredis\/)/.test(g),
  ],
  [
    'logging (pino)',
    (g) =>
      /^(pino|sonic-boom|@pinojs\/|fast-redact|quick-format-unescaped|thread-stream|atomic-sleep|on-exit-leak-free)/.test(
        g,
      ),
  ],
  [
    'metrics (prom-client)',
    (g) => /^(prom-client|tdigest|bintrees)$/.test(g) || g.startsWith('dist/metrics'),
  ],
  ['tokenizer (gpt-tokenizer)', (g) => g === 'gpt-tokenizer'],
  ['Switchyard code (dist/)', (g) => g.startsWith('dist/')],
];
const layers = new Map();
for (const [group, us] of groups) {
  const layer = LAYERS.find(([, test]) => test(group))?.[0] ?? `other: ${group}`;
  layers.set(layer, (layers.get(layer) ?? 0) + us);
}
// Inclusive cost by feature: each sample goes to the innermost frame on its stack that belongs to a feature, so
// Node's own work (a socket write, an event) is charged to the feature that caused it. Samples with no such frame
// are Node's HTTP server itself (parsing requests, socket reads, timers) or garbage collection.
const FEATURES = [
  ['access log (pino)', /http-front\.js.*writeAccessLog|\/(pino|sonic-boom)\//],
  ['request id, Server-Timing, drain check (http-front)', /dist\/common\/http\/http-front|\/on-headers\//],
  [
    'reading and parsing the body',
    /body-reader\.guard|plain-json-body|\/(body-parser|raw-body|type-is|iconv-lite)\//,
  ],
  [
    'validation (ValidationPipe, class-validator, class-transformer)',
    /dist\/common\/validation|\/class-(validator|transformer)\//,
  ],
  ['authentication (token hash, credential cache)', /dist\/auth\//],
  [
    'admission (limits script, prompt estimate, rate-limit headers)',
    /dist\/limits\/|request-admission|token-estimator|\/gpt-tokenizer\//,
  ],
  ['in-flight lease (crash safety)', /inflight-leases/],
  ['request log (entry, redaction, queue, writer)', /dist\/request-log\//],
  ['traces (OpenTelemetry)', /dist\/telemetry\/|\/@opentelemetry\//],
  ['usage record (recorder, writer script)', /dist\/usage\/|dist\/billing\//],
  ['metrics (prom-client)', /dist\/metrics\/|\/prom-client\//],
  ['writing the answer (writeHead, end, the socket write)', /write-json/],
  ['routing and the upstream call (undici)', /dist\/(routing|providers|chat)\/|\/undici\/|^wasm:/],
  [
    'Redis client replies (ioredis)',
    /\/(ioredis|redis-parser|denque|cluster-key-slot|standard-as-callback)\//,
  ],
  ['Nest (router, guards, pipes)', /\/@nestjs\/|\/rxjs\//],
  [
    'Express (router, request setup)',
    /\/(express|router|finalhandler|parseurl|path-to-regexp|proxy-addr|forwarded)\//,
  ],
];
const parentOf = new Map();
for (const node of profile.nodes) for (const child of node.children ?? []) parentOf.set(child, node.id);
const features = new Map();
let featureTotal = 0;
let counting = false;
for (let i = 0; i < profile.samples.length; i++) {
  const leaf = byId.get(profile.samples[i]);
  counting ||= leaf.callFrame.url.includes('/dist/gateway/');
  const name = leaf.callFrame.functionName;
  if (!counting || name === '(idle)' || name === '(program)') continue;
  const us = profile.timeDeltas[i] ?? 0;
  featureTotal += us;
  let feature = name === '(garbage collector)' ? 'garbage collection' : undefined;
  for (let id = profile.samples[i]; !feature && id !== undefined; id = parentOf.get(id)) {
    const frame = byId.get(id).callFrame;
    feature = FEATURES.find(([, test]) => test.test(`${frame.url} ${frame.functionName}`))?.[0];
  }
  feature ??= "Node's HTTP server alone (request parsing, socket reads, timers)";
  features.set(feature, (features.get(feature) ?? 0) + us);
}
const requests = result.requests.total;
console.log(
  `by feature (inclusive: Node's work charged to the feature that caused it)\n${[...features]
    .sort((a, b) => b[1] - a[1])
    .map(
      ([k, us]) =>
        `${((us / featureTotal) * 100).toFixed(1).padStart(5)}%  ${(us / requests).toFixed(0).padStart(5)} us/request  ${k}`,
    )
    .join('\n')}\n`,
);
const gc = [...fns].filter(([k]) => k.startsWith('(garbage collector)')).reduce((n, [, us]) => n + us, 0);
console.log(
  `by layer (garbage collection ${((gc / total) * 100).toFixed(1)}% is inside the first)\n${show(layers, 20)}\n`,
);
console.log(
  `busy CPU ${(total / 1000).toFixed(0)} ms = ${((total / result.requests.total) * 1).toFixed(0)} us/request\n\nby module\n${show(groups, 30)}\n\ntop functions\n${show(fns, 40)}\n\nprofile: ${join(dir, file)}`,
);
