#!/usr/bin/env node
// Many agent streams held open at once through one Switchyard: what a stream costs in memory and CPU, and whether
// the replica still answers while it holds them.
//   npm run bench:streams [-- --streams N] [--seconds S] [--prompt-kb P] [--main <a build's dist/main.js>]
//   (after npm run build; needs Redis)
// N streams (default 2000) of S seconds each (default 30: one chunk a second, as an agent's long turn) are opened
// 200 every 100 ms; the gateway's RSS and CPU are sampled each second and /health/live is timed every 200 ms while they
// run (reported apart: while they are being opened, and once all flow). Bytes per stream = (peak RSS while all are open - RSS after warm-up) / N. Prints a table; writes
// bench/results/held-streams.{json,md}. --prompt-kb P sends each stream an agent's conversation of about P KB instead of
// one short line (bench/lib/conversation.mjs). The gateway holds two sockets a stream (client and upstream), so a
// process's open-file limit (ulimit -n) bounds N at about half of it.
import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { Agent, request } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { cpuMs, pct, rssMb, start, stopAll } from './lib/processes.mjs';
import { conversation } from './lib/conversation.mjs';
import { startBenchSwitchyard } from './lib/switchyard.mjs';

const root = join(import.meta.dirname, '..');
const args = process.argv.slice(2);
const option = (name, fallback) => (args.includes(name) ? Number(args[args.indexOf(name) + 1]) : fallback);

/** Holds `streams` streams of `seconds` chunks through a fresh Switchyard; resolves with the measurements. */
export async function heldStreams({
  streams = 2000,
  seconds = 30,
  promptKb = 0,
  main = join(root, 'dist/main.js'),
} = {}) {
  const dir = mkdtempSync(join(tmpdir(), 'switchyard-held-'));
  const upstream = await start(join(root, 'bench/standin-upstream.mjs'), {
    CHUNKS: String(seconds),
    GAP_MS: '1000',
  });
  const gateway = await startBenchSwitchyard({
    main,
    upstreamUrl: upstream.url,
    dir,
    maxConnections: streams + 64,
    nodeArgs: process.env.HELD_NODE_ARGS ? process.env.HELD_NODE_ARGS.split(' ') : [],
  });
  const { hostname, port } = new URL(gateway.url);
  const agent = new Agent({ keepAlive: false, maxSockets: Infinity });
  /** Streams that have had their first bytes (all of them: every stream is open and flowing). */
  let streaming = 0;
  const open = (path, body) =>
    new Promise((resolve) => {
      const req = request(
        {
          host: hostname,
          port,
          path,
          method: body ? 'POST' : 'GET',
          agent,
          headers: { authorization: `Bearer ${gateway.token}`, 'content-type': 'application/json' },
        },
        (res) => {
          let bytes = 0;
          let first;
          res.on('data', (chunk) => {
            bytes += chunk.length;
            if (first === undefined && path !== '/health/live') streaming++;
            first ??= Date.now();
          });
          res.on('end', () => resolve({ status: res.statusCode, bytes, first }));
          res.on('error', (error) => resolve({ status: res.statusCode, bytes, error: error.code }));
        },
      );
      req.on('error', (error) => resolve({ status: 0, bytes: 0, error: error.code ?? error.message }));
      req.end(body);
    });
  const body = JSON.stringify({ model: 'bench', stream: true, messages: conversation(promptKb) });

  // Warm up (code paths compiled, pools made), then settle: the idle footprint the streams are measured against.
  await Promise.all(Array.from({ length: 20 }, () => open('/v1/chat/completions', body)));
  await new Promise((resolve) => setTimeout(resolve, 2000));
  const idleMb = rssMb(gateway.pid);
  const cpuStart = cpuMs(gateway.pid);
  const started = Date.now();

  const pending = [];
  for (let i = 0; i < streams; i += 200) {
    for (let j = i; j < Math.min(streams, i + 200); j++) pending.push(open('/v1/chat/completions', body));
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  const opened = Date.now();
  let peakMb = idleMb;
  // /health/live while the streams are being opened, and once all of them flow (what a load balancer sees).
  const probes = { opening: [], held: [] };
  let done = false;
  const all = Promise.all(pending).finally(() => (done = true));
  const sampler = (async () => {
    while (!done) {
      peakMb = Math.max(peakMb, rssMb(gateway.pid));
      const allFlowing = streaming >= streams;
      const before = performance.now();
      const probe = await open('/health/live');
      if (probe.status === 200) (allFlowing ? probes.held : probes.opening).push(performance.now() - before);
      await new Promise((resolve) => setTimeout(resolve, 200));
    }
  })();
  const results = await all;
  await sampler;
  const ended = Date.now();
  const cpu = cpuMs(gateway.pid) - cpuStart;
  const completed = results.filter((r) => r.status === 200 && r.bytes > seconds * 50).length;
  const failures = {};
  for (const r of results)
    if (!(r.status === 200 && r.bytes > seconds * 50)) {
      const why = `${r.status}${r.status === 200 ? ` cut at ${r.bytes} bytes` : ''}${r.error ? ` ${r.error}` : ''}`;
      failures[why] = (failures[why] ?? 0) + 1;
    }
  return {
    streams,
    seconds,
    promptKb,
    completed,
    failures,
    failed: streams - completed,
    openSeconds: (opened - started) / 1000,
    wallSeconds: (ended - started) / 1000,
    idleMb,
    peakMb,
    kbPerStream: ((peakMb - idleMb) * 1024) / streams,
    cpuMs: cpu,
    coreShare: cpu / (ended - started),
    cpuUsPerStreamSecond: (cpu * 1000) / (streams * seconds),
    healthP50Ms: pct(probes.held, 50),
    healthP99Ms: pct(probes.held, 99),
    healthMaxMs: Math.max(...probes.held),
    healthWhileOpeningMaxMs: Math.max(...probes.opening),
  };
}

/** The table's lines for one run. */
export function heldStreamsTable(r) {
  const f = (x, d = 1) => (Number.isFinite(x) ? x.toFixed(d) : '-');
  return [
    '| streams held | completed | RSS idle → peak (MB) | KB / stream | core share | CPU µs / stream-second | /health/live held: p50 / p99 / max (ms) | opening: max (ms) |',
    '|---|---|---|---|---|---|---|---|',
    `| ${r.streams} × ${r.seconds} s${r.promptKb ? `, ${r.promptKb} KB prompts` : ''} | ${r.completed} | ${f(r.idleMb, 0)} → ${f(r.peakMb, 0)} | ${f(r.kbPerStream)} | ${f(r.coreShare * 100, 0)} % | ${f(r.cpuUsPerStreamSecond)} | ${f(r.healthP50Ms)} / ${f(r.healthP99Ms)} / ${f(r.healthMaxMs)} | ${f(r.healthWhileOpeningMaxMs)} |`,
  ];
}

/** Prints the table and writes bench/results/held-streams.{json,md}. */
export function reportHeldStreams(result) {
  const table = heldStreamsTable(result).join('\n');
  console.log(table);
  if (result.failed) console.log('failed:', JSON.stringify(result.failures));
  mkdirSync(join(root, 'bench/results'), { recursive: true });
  writeFileSync(join(root, 'bench/results/held-streams.json'), JSON.stringify(result, null, 2));
  writeFileSync(join(root, 'bench/results/held-streams.md'), `${table}\n`);
}

if (import.meta.url === `file://${process.argv[1]}`) {
  heldStreams({
    streams: option('--streams', 2000),
    seconds: option('--seconds', 30),
    promptKb: option('--prompt-kb', 0),
    main: args.includes('--main') ? args[args.indexOf('--main') + 1] : undefined,
  })
    .then(reportHeldStreams)
    .catch((error) => {
      console.error(error);
      process.exitCode = 1;
    })
    .finally(stopAll);
}
