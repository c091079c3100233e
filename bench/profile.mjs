#!/usr/bin/env node
// Where does a request's CPU go? Runs the stand-in upstream and Switchyard (production-like config, as in
// bench/gateway.mjs) under `node --cpu-prof`, loads it with autocannon, and prints self time grouped by
// package / source file, then the top functions. node bench/profile.mjs [--stream] [--duration S]
// (after npm run build; needs Redis). The raw .cpuprofile is kept for Chrome DevTools.
import { mkdtempSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import autocannon from 'autocannon';
import { request } from 'undici';
import { start, stopAll } from './lib/processes.mjs';

const root = join(import.meta.dirname, '..');
const args = process.argv.slice(2);
const stream = args.includes('--stream');
const duration = args.includes('--duration') ? Number(args[args.indexOf('--duration') + 1]) : 10;

const dir = mkdtempSync(join(tmpdir(), 'switchyard-profile-'));
const upstream = await start(join(root, 'bench/standin-upstream.mjs'), {});
writeFileSync(
  join(dir, 'switchyard.yaml'),
  `server: { port: 0, host: 127.0.0.1 }
redis: { keyPrefix: "sy-prof:${Date.now()}:" }
admin: { apiKey: prof-admin }
backends:
  standin: { type: openai, baseUrl: "${upstream.url}/v1", apiKey: upstream-key, maxConnections: 256 }
models:
  bench: { backend: standin, upstreamModel: bench }
teams:
  bench: { models: ["*"], limits: { requestsPerMinute: 100000000, tokensPerDay: 100000000000 } }
`,
);
const gateway = await start(['--cpu-prof', '--cpu-prof-dir', dir, join(root, 'dist/main.js')], { SWITCHYARD_CONFIG: join(dir, 'switchyard.yaml') }, /"url":"(http:[^"]+)"/);
const { token } = await (await request(`${gateway.url}/admin/v1/teams/bench/tokens`, { method: 'POST', headers: { authorization: 'Bearer prof-admin' } })).body.json();
const load = (seconds) =>
  autocannon({
    url: `${gateway.url}/v1/chat/completions`,
    method: 'POST',
    connections: 32,
    duration: seconds,
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
    body: JSON.stringify({ model: 'bench', messages: [{ role: 'user', content: 'Say something.' }], ...(stream ? { stream: true } : {}) }),
  });
const result = await load(duration);
console.log(`${result.requests.total} requests, ${result.requests.average} req/s, errors ${result.errors + result.non2xx}`);
gateway.child.kill('SIGTERM');
await new Promise((r) => gateway.child.once('exit', r));
stopAll();

const file = readdirSync(dir).find((f) => f.endsWith('.cpuprofile'));
const profile = JSON.parse(readFileSync(join(dir, file), 'utf8'));
const byId = new Map(profile.nodes.map((n) => [n.id, n]));
const selfUs = new Map();
for (let i = 0; i < profile.samples.length; i++) selfUs.set(profile.samples[i], (selfUs.get(profile.samples[i]) ?? 0) + (profile.timeDeltas[i] ?? 0));
const groupOf = (url) => {
  if (!url) return '(native / gc / idle)';
  const path = url.replace('file://', '');
  const nm = path.lastIndexOf('node_modules/');
  if (nm >= 0) {
    const rest = path.slice(nm + 13).split('/');
    return rest[0].startsWith('@') ? `${rest[0]}/${rest[1]}` : rest[0];
  }
  if (path.startsWith('node:')) return path;
  return relative(root, path);
};
const groups = new Map();
const fns = new Map();
let total = 0;
for (const [id, us] of selfUs) {
  const node = byId.get(id);
  const name = node.callFrame.functionName || '(anonymous)';
  if (name === '(idle)' || name === '(program)') continue;
  total += us;
  const group = groupOf(node.callFrame.url);
  groups.set(group, (groups.get(group) ?? 0) + us);
  const key = `${name} ${group}:${node.callFrame.lineNumber + 1}`;
  fns.set(key, (fns.get(key) ?? 0) + us);
}
const show = (map, n) =>
  [...map]
    .sort((a, b) => b[1] - a[1])
    .slice(0, n)
    .map(([k, us]) => `${((us / total) * 100).toFixed(1).padStart(5)}%  ${(us / 1000).toFixed(0).padStart(6)} ms  ${k}`)
    .join('\n');
console.log(`busy CPU ${(total / 1000).toFixed(0)} ms = ${((total / result.requests.total) * 1).toFixed(0)} us/request\n\nby module\n${show(groups, 30)}\n\ntop functions\n${show(fns, 40)}\n\nprofile: ${join(dir, file)}`);
