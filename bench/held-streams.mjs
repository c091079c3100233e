#!/usr/bin/env node
// Many agent streams held open at once through one Switchyard: what a stream costs in memory and CPU, and whether
// the replica still answers while it holds them.
//   npm run bench:streams [-- --streams N] [--seconds S] [--open-rate R] [--prompt-kb P] [--main <dist/main.js>]
//   (after npm run build; needs Redis)
// N streams (default 2000) of S seconds each (default 30: one chunk a second, as an agent's long turn) are opened
// R a second (default 2000, in tenths every 100 ms); the gateway's RSS and CPU are sampled and /health/live is timed
// every 200 ms while they run (reported apart: while they are being opened, and once all flow or failed). Bytes per
// stream = (peak RSS - RSS after warm-up) / N; the median RSS once all flow is reported beside the peak (the
// opening's garbage not yet collected). Prints a table; writes bench/results/held-streams.{json,md}. --prompt-kb P
// sends each stream an agent's conversation of about P KB instead of one short line (bench/lib/conversation.mjs).
// The gateway holds two sockets a stream (client and upstream), so a process's open-file limit (ulimit -n) bounds N
// at about half of it (it warns). Opening faster than a loaded machine accepts overflows the listen backlog: such
// streams hear nothing and are counted failed after 60 s (SILENT); lower --open-rate and raise --seconds for large N.
import { mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { Agent, request } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { cpuMs, pct, rssMb, start, stopAll } from './lib/processes.mjs';
import { conversation } from './lib/conversation.mjs';
import { startBenchSwitchyard } from './lib/switchyard.mjs';

const root = join(import.meta.dirname, '..');
const args = process.argv.slice(2);
/** How long a request may hear nothing before it counts as failed. */
const SILENT_MS = 60_000;
const option = (name, fallback) => (args.includes(name) ? Number(args[args.indexOf(name) + 1]) : fallback);

/** Holds `streams` streams of `seconds` chunks through a fresh Switchyard; resolves with the measurements. */
export async function heldStreams({
  streams = 2000,
  seconds = 30,
  promptKb = 0,
  openPer100Ms = 200,
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
  // Two sockets a stream (client and upstream): past half the gateway's open-file limit, streams fail to open.
  const fileLimit = Number(
    /Max open files\s+(\d+)/.exec(readFileSync(`/proc/${gateway.pid}/limits`, 'utf8'))?.[1],
  );
  if (streams * 2 + 100 > fileLimit)
    console.error(
      `held-streams: ${streams} streams need ~${streams * 2 + 100} open files in the gateway, its limit is ${fileLimit}`,
    );
  const agent = new Agent({ keepAlive: false, maxSockets: Infinity });
  /** Streams that have had their first bytes (all of them: every stream is open and flowing). */
  let streaming = 0;
  /** Streams that failed before their first bytes (they will never flow). */
  let gaveUp = 0;
  const open = (path, body) =>
    new Promise((settle) => {
      let settled = false;
      const resolve = (result) => {
        if (settled) return;
        settled = true;
        if (result.first === undefined && result.error && path !== '/health/live') gaveUp++;
        settle(result);
      };
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
          res.on('error', (error) => resolve({ status: res.statusCode, bytes, first, error: error.code }));
          res.on('close', () => resolve({ status: res.statusCode, bytes, first, error: 'closed' })); // after 'end': no-op
        },
      );
      req.on('error', (error) => resolve({ status: 0, bytes: 0, error: error.code ?? error.message }));
      // A request that hears nothing for SILENT_MS gives up (a stream sends a chunk a second). Opening faster than
      // the gateway accepts fills its listen backlog (511): the client's handshake completes, the gateway drops it,
      // and the client's data waits on TCP's retransmissions; without a bound a run could hang for ~15 minutes.
      req.setTimeout(SILENT_MS, () => req.destroy(Object.assign(new Error('silent'), { code: 'SILENT' })));
      req.end(body);
    });
  const body = JSON.stringify({ model: 'bench', stream: true, messages: conversation(promptKb) });

  // Warm up (code paths compiled, pools made), then settle: the idle footprint the streams are measured against.
  await Promise.all(Array.from({ length: 20 }, () => open('/v1/chat/completions', body)));
  await new Promise((resolve) => setTimeout(resolve, 2000));
  const idleMb = rssMb(gateway.pid);
  const gcStart = await fullCollections(gateway);
  const cpuStart = cpuMs(gateway.pid);
  const started = Date.now();

  const pending = [];
  for (let i = 0; i < streams; i += openPer100Ms) {
    for (let j = i; j < Math.min(streams, i + openPer100Ms); j++)
      pending.push(open('/v1/chat/completions', body));
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  const opened = Date.now();
  let peakMb = idleMb;
  /** RSS samples once every stream flows (the opening's burst of garbage behind it). */
  const heldMbs = [];
  // /health/live while the streams are being opened, and once all of them flow (what a load balancer sees).
  const probes = { opening: [], held: [] };
  let done = false;
  const all = Promise.all(pending).finally(() => (done = true));
  const sampler = (async () => {
    while (!done) {
      const rss = rssMb(gateway.pid);
      peakMb = Math.max(peakMb, rss);
      const allFlowing = streaming + gaveUp >= streams;
      if (allFlowing) heldMbs.push(rss);
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
  const gcEnd = await fullCollections(gateway);
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
    openPerSecond: openPer100Ms * 10,
    completed,
    failures,
    failed: streams - completed,
    openSeconds: (opened - started) / 1000,
    wallSeconds: (ended - started) / 1000,
    idleMb,
    peakMb,
    kbPerStream: ((peakMb - idleMb) * 1024) / streams,
    heldMedianMb: pct(heldMbs, 50),
    cpuMs: cpu,
    fullCollections: gcEnd.count - gcStart.count,
    fullCollectionMs: (gcEnd.seconds - gcStart.seconds) * 1000,
    coreShare: cpu / (ended - started),
    cpuUsPerStreamSecond: (cpu * 1000) / (streams * seconds),
    healthP50Ms: pct(probes.held, 50),
    healthP99Ms: pct(probes.held, 99),
    healthMaxMs: Math.max(...probes.held),
    healthWhileOpeningMaxMs: Math.max(...probes.opening),
  };
}

/** V8's full collections so far (count, seconds in pauses), from the gateway's /metrics (prom-client's default). */
async function fullCollections(gateway) {
  const text = await (await fetch(`${gateway.url}/metrics`)).text();
  const read = (name) => Number(new RegExp(`^${name}\\{kind="major"\\} (\\S+)`, 'm').exec(text)?.[1] ?? 0); // absent before the first
  return { count: read('nodejs_gc_duration_seconds_count'), seconds: read('nodejs_gc_duration_seconds_sum') };
}

/** The table's lines for one run. */
export function heldStreamsTable(r) {
  const f = (x, d = 1) => (Number.isFinite(x) ? x.toFixed(d) : '-');
  return [
    '| streams held | completed | RSS idle → peak (once all flow, median) (MB) | KB / stream | core share | CPU µs / stream-second | /health/live held: p50 / p99 / max (ms) | opening: max (ms) |',
    '|---|---|---|---|---|---|---|---|',
    `| ${r.streams} × ${r.seconds} s${r.promptKb ? `, ${r.promptKb} KB prompts` : ''} | ${r.completed} | ${f(r.idleMb, 0)} → ${f(r.peakMb, 0)} (${f(r.heldMedianMb, 0)}) | ${f(r.kbPerStream)} | ${f(r.coreShare * 100, 0)} % | ${f(r.cpuUsPerStreamSecond)} | ${f(r.healthP50Ms)} / ${f(r.healthP99Ms)} / ${f(r.healthMaxMs)} | ${f(r.healthWhileOpeningMaxMs)} |`,
  ];
}

/** Prints the table and writes bench/results/held-streams.{json,md}. */
export function reportHeldStreams(result) {
  const table = heldStreamsTable(result).join('\n');
  console.log(table);
  if (result.failed) console.log('failed:', JSON.stringify(result.failures));
  console.log(
    `full collections while held: ${result.fullCollections}, ${result.fullCollectionMs.toFixed(0)} ms of pauses`,
  );
  mkdirSync(join(root, 'bench/results'), { recursive: true });
  writeFileSync(join(root, 'bench/results/held-streams.json'), JSON.stringify(result, null, 2));
  writeFileSync(join(root, 'bench/results/held-streams.md'), `${table}\n`);
}

if (import.meta.url === `file://${process.argv[1]}`) {
  heldStreams({
    streams: option('--streams', 2000),
    seconds: option('--seconds', 30),
    promptKb: option('--prompt-kb', 0),
    openPer100Ms: option('--open-rate', 2000) / 10,
    main: args.includes('--main') ? args[args.indexOf('--main') + 1] : undefined,
  })
    .then(reportHeldStreams)
    .catch((error) => {
      console.error(error);
      process.exitCode = 1;
    })
    .finally(stopAll);
}
