#!/usr/bin/env node
// The spread of two benchmark runs, as a markdown table: node bench/spread.mjs [a.json b.json]
// (default: the two latest bench/results/gateway-*.json). Each cell is "run A / run B".
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';

const dir = join(import.meta.dirname, 'results');
const files =
  process.argv.length >= 4
    ? process.argv.slice(2, 4)
    : readdirSync(dir)
        .filter((f) => /^gateway-.*\.json$/.test(f))
        .sort()
        .slice(-2)
        .map((f) => join(dir, f));
if (files.length < 2) throw new Error('need two runs: bench/results/gateway-*.json');
const [a, b] = files.map((f) => JSON.parse(readFileSync(f, 'utf8')));
const fmt = (n, d) => (Number.isFinite(n) ? n.toFixed(d) : '-');
const pair = (x, y, d) => `${fmt(x, d)} / ${fmt(y, d)}`;
const lines = [
  `Runs: ${a.date} and ${b.date} (${a.duration} s per measurement, ${a.prime} s priming)`,
  '',
  '| scenario | target | CPU ms / 1000 req | req/s | p50 ms | TTFB p50 ms | peak RSS MB | errors |',
  '|---|---|---|---|---|---|---|---|',
];
for (const r of a.rows) {
  const s = b.rows.find((x) => x.scenario === r.scenario && x.target === r.target);
  if (!s) continue;
  lines.push(
    `| ${r.scenario} | ${r.target} | ${pair(r.cpuMsPer1000, s.cpuMsPer1000, 0)} | ${pair(r.rps, s.rps, 0)} | ${pair(r.p50, s.p50, 2)} | ${pair(r.ttfbP50, s.ttfbP50, 2)} | ${pair(r.peakRssMb, s.peakRssMb, 0)} | ${r.errors} / ${s.errors} |`,
  );
}
console.log(lines.join('\n'));
