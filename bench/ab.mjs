#!/usr/bin/env node
// Before and after, in one run: builds another commit of Switchyard next to this checkout's build and measures
// both (and the floor) in alternating rounds, so a change's effect is not lost in this machine's drift between
// runs (±30 %). Switchyard alone (production-like config, as in bench/gateway.mjs), c=32, plain requests,
// 20-chunk and 200-chunk streams; CPU of the gateway process per 1000 requests; prints each round and the
// medians, and what one relayed chunk costs ((200-chunk - 20-chunk) / 180).
//   node bench/ab.mjs <commit> [--rounds N] [--duration S]   (after npm run build; needs Redis and git)
// With --build <dir> instead of a commit, another checkout that is already built with its own node_modules (needed
// when the change is a dependency upgrade: a commit's worktree shares this checkout's node_modules).
// With --node <path> instead of a commit, this checkout's build under that Node against the same build under the Node
// running this script (e.g. Node 20 against 24: `node scripts/with-node.cjs node bench/ab.mjs --node /usr/bin/node`).
// With --flags "<node flags>" instead of a commit, this checkout's build started with those flags instead of the
// production ones (bench/lib/switchyard.mjs) against it started as production does, e.g. `--flags ""` for Node's
// defaults, `--flags "--max-semi-space-size=8"` for another young generation. Prints peak RSS per round too.
import { execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import autocannon from 'autocannon';
import { cpuMs, rssMb, start, stopAll } from './lib/processes.mjs';
import { PRODUCTION_NODE_ARGS, startBenchSwitchyard } from './lib/switchyard.mjs';

const root = join(import.meta.dirname, '..');
const args = process.argv.slice(2);
const option = (name, fallback) => (args.includes(name) ? Number(args[args.indexOf(name) + 1]) : fallback);
const otherNode = args.includes('--node') ? args[args.indexOf('--node') + 1] : undefined;
const otherBuild = args.includes('--build') ? args[args.indexOf('--build') + 1] : undefined;
const otherFlags = args.includes('--flags')
  ? args[args.indexOf('--flags') + 1].split(' ').filter(Boolean)
  : undefined;
const base = otherNode || otherBuild || otherFlags ? undefined : args[0];
if (!otherNode && !otherBuild && !otherFlags && (!base || base.startsWith('--')))
  throw new Error(
    'usage: node bench/ab.mjs <commit>|--build <dir>|--node <path>|--flags "<node flags>" [--rounds N] [--duration S]',
  );
const rounds = option('--rounds', 6);
const duration = option('--duration', 8);

// The other commit, built in a git worktree of its own that shares this checkout's node_modules.
const dir = mkdtempSync(join(tmpdir(), 'switchyard-ab-'));
const other = otherBuild ?? join(dir, 'build');
if (base) {
  execFileSync('git', ['worktree', 'add', '--detach', other, base], { cwd: root, stdio: 'ignore' });
  symlinkSync(join(root, 'node_modules'), join(other, 'node_modules'));
  execFileSync(
    process.execPath,
    [join(root, 'node_modules/typescript/bin/tsc'), '-p', 'tsconfig.build.json'],
    {
      cwd: other,
      stdio: 'inherit',
    },
  );
  if (!existsSync(join(other, 'dist/main.js'))) throw new Error(`${base} did not build`);
}
const nodeVersion = (node) => execFileSync(node, ['-p', 'process.version'], { encoding: 'utf8' }).trim();

const upstream = await start(join(root, 'bench/standin-upstream.mjs'), {});
// [name, the build's main, the Node that runs it, its flags]; the floor is the same proxy in every mode.
const targets = otherFlags
  ? [
      [`flags "${otherFlags.join(' ')}"`, join(root, 'dist/main.js'), undefined, otherFlags],
      [
        `production flags "${PRODUCTION_NODE_ARGS.join(' ')}"`,
        join(root, 'dist/main.js'),
        undefined,
        PRODUCTION_NODE_ARGS,
      ],
      ['floor', undefined],
    ]
  : otherNode
    ? [
        [`Node ${nodeVersion(otherNode)}`, join(root, 'dist/main.js'), otherNode],
        [`Node ${process.version}`, join(root, 'dist/main.js'), process.execPath],
        ['floor', undefined],
      ]
    : [
        [base ?? otherBuild, join(other, 'dist/main.js')],
        ['this checkout', join(root, 'dist/main.js')],
        ['floor', undefined],
      ];
const scenarios = [
  ['plain', false, 'bench'],
  ['20-chunk streams', true, 'bench'],
  ['200-chunk streams', true, 'bench-200'],
];

async function launch(main, node, productionArgs) {
  if (!main)
    return {
      ...(await start(join(root, 'bench/floor-proxy.mjs'), { UPSTREAM: upstream.url, TOKEN: 'ab' })),
      token: 'ab',
    };
  return startBenchSwitchyard({ main, node, productionArgs, upstreamUrl: upstream.url, dir });
}

const results = new Map();
/** Peak RSS of each target over each round (all three scenarios). */
const peaks = new Map();
try {
  for (let round = 0; round < rounds; round++) {
    // Alternate the order, so neither build always runs first after the floor.
    for (const [name, main, node, flags] of round % 2 ? [...targets].reverse() : targets) {
      const server = await launch(main, node, flags);
      let peakMb = 0;
      const sampler = setInterval(() => (peakMb = Math.max(peakMb, rssMb(server.pid))), 200);
      for (const [scenario, stream, model] of scenarios) {
        const load = {
          url: `${server.url}/v1/chat/completions`,
          method: 'POST',
          headers: { authorization: `Bearer ${server.token}`, 'content-type': 'application/json' },
          body: JSON.stringify({ model, stream, messages: [{ role: 'user', content: 'Say something.' }] }),
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
      clearInterval(sampler);
      peaks.set(name, [...(peaks.get(name) ?? []), peakMb]);
      server.child.kill('SIGTERM');
      await new Promise((resolve) => server.child.once('exit', resolve));
    }
  }
} finally {
  stopAll();
  if (base) execFileSync('git', ['worktree', 'remove', '--force', other], { cwd: root, stdio: 'ignore' });
}
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
// Per relayed chunk, from each round's pair of stream scenarios.
const perChunk = [...new Set([...results.keys()].map((key) => key.split(' | ')[1]))].map((target) => {
  const short = results.get(`20-chunk streams | ${target}`);
  const long = results.get(`200-chunk streams | ${target}`);
  const us = long.map((cpu, i) => (cpu - short[i]) / 180);
  return {
    target,
    'CPU µs per relayed chunk, each round': us.map((x) => x.toFixed(2)).join(' / '),
    median: median(us).toFixed(2),
  };
});
console.table(perChunk);
console.table(
  [...peaks].map(([target, mb]) => ({
    target,
    'peak RSS MB, each round': mb.map((x) => x.toFixed(0)).join(' / '),
    median: median(mb).toFixed(0),
  })),
);
process.exit(0);
