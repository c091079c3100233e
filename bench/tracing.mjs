#!/usr/bin/env node
// What tracing costs, in one run: the same build started with tracing off (no `telemetry`) and on (`telemetry.otlp`,
// every trace sampled, and one in ten; OTLP protobuf to a local receiver that accepts and discards), in alternating
// rounds so this machine's drift between runs (±30 %) does not pass for the difference. Production-like config
// (bench/lib/switchyard.mjs), c=32, plain requests and 20-chunk streams; CPU of the gateway process per 1000
// requests, the median of the rounds, and each round's on/off ratio (docs/performance.md, tracing).
//   node bench/tracing.mjs [--rounds N] [--duration S]   (after npm run build; needs Redis)
import { createServer } from 'node:http';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import autocannon from 'autocannon';
import { cpuMs, start, stopAll } from './lib/processes.mjs';
import { startBenchSwitchyard } from './lib/switchyard.mjs';

const root = join(import.meta.dirname, '..');
const args = process.argv.slice(2);
const option = (name, fallback) => (args.includes(name) ? Number(args[args.indexOf(name) + 1]) : fallback);
const rounds = option('--rounds', 4);
const duration = option('--duration', 6);
const dir = mkdtempSync(join(tmpdir(), 'switchyard-tracing-'));

// The OTLP receiver: reads each export whole, counts it and answers an empty ExportTraceServiceResponse.
const received = { exports: 0, bytes: 0 };
const sink = createServer((req, res) => {
  req.on('data', (chunk) => (received.bytes += chunk.length));
  req.on('end', () => {
    received.exports++;
    res.writeHead(200, { 'content-type': 'application/x-protobuf' }).end();
  });
});
await new Promise((resolve) => sink.listen(0, '127.0.0.1', resolve));
const sinkUrl = `http://127.0.0.1:${sink.address().port}`;

const upstream = await start(join(root, 'bench/standin-upstream.mjs'), {});
const targets = [
  ['tracing off', ''],
  [
    'tracing on (all sampled)',
    `telemetry: { otlp: { endpoint: "${sinkUrl}", protocol: http/protobuf, sampleRatio: 1 } }\n`,
  ],
  [
    'tracing on (10 % sampled)',
    `telemetry: { otlp: { endpoint: "${sinkUrl}", protocol: http/protobuf, sampleRatio: 0.1 } }\n`,
  ],
];
const scenarios = [
  ['plain', false],
  ['20-chunk streams', true],
];

const results = new Map();
try {
  for (let round = 0; round < rounds; round++) {
    for (const [name, extraConfig] of round % 2 ? [...targets].reverse() : targets) {
      const server = await startBenchSwitchyard({
        main: join(root, 'dist/main.js'),
        upstreamUrl: upstream.url,
        dir,
        extraConfig,
      });
      for (const [scenario, stream] of scenarios) {
        const load = {
          url: `${server.url}/v1/chat/completions`,
          method: 'POST',
          headers: { authorization: `Bearer ${server.token}`, 'content-type': 'application/json' },
          body: JSON.stringify({
            model: 'bench',
            stream,
            messages: [{ role: 'user', content: 'Say something.' }],
          }),
        };
        await autocannon({ ...load, connections: 8, duration: 2 });
        const before = cpuMs(server.pid);
        const result = await autocannon({ ...load, connections: 32, duration });
        if (result.errors + result.non2xx)
          throw new Error(`${name}, ${scenario}: ${result.errors + result.non2xx} errors`);
        const key = `${scenario} | ${name}`;
        results.set(key, [
          ...(results.get(key) ?? []),
          ((cpuMs(server.pid) - before) / result.requests.total) * 1000,
        ]);
      }
      server.child.kill('SIGTERM');
      await new Promise((resolve) => server.child.once('exit', resolve));
    }
  }
} finally {
  stopAll();
  sink.close();
}
if (!received.exports) throw new Error('the OTLP receiver got no spans: tracing was not on');
const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
console.table(
  [...results].map(([key, cpu]) => {
    const [scenario, target] = key.split(' | ');
    return {
      scenario,
      target,
      'CPU ms/1000 req, each round': cpu.map((x) => x.toFixed(0)).join(' / '),
      median: median(cpu).toFixed(0),
    };
  }),
);
console.table(
  scenarios.flatMap(([scenario]) =>
    targets.slice(1).map(([target]) => {
      const off = results.get(`${scenario} | ${targets[0][0]}`);
      const on = results.get(`${scenario} | ${target}`);
      const ratios = on.map((cpu, i) => cpu / off[i]);
      return {
        scenario,
        target,
        'x tracing off, each round': ratios.map((x) => x.toFixed(3)).join(' / '),
        median: median(ratios).toFixed(3),
      };
    }),
  ),
);
console.log(`OTLP receiver: ${received.exports} exports, ${(received.bytes / 1e6).toFixed(1)} MB`);
process.exit(0);
