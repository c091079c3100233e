#!/usr/bin/env node
// Switchyard against the direct upstream and the floor proxy, in one run on one machine.
// node bench/gateway.mjs [--duration S] [--prime S] [--quick]   (after npm run build; needs Redis)
// Prints a table; writes bench/results/gateway.{json,md}. --no-peers skips Portkey and LiteLLM (installed by
// bench/install-peers.sh on first use, under bench/peers/; every server listens on 127.0.0.1 only).
import { spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import autocannon from 'autocannon';
import { request } from 'undici';

const root = join(import.meta.dirname, '..');
const args = process.argv.slice(2);
const quick = args.includes('--quick');
const option = (name, fallback) => (args.includes(name) ? Number(args[args.indexOf(name) + 1]) : fallback);
const DURATION = option('--duration', quick ? 3 : 10);
const PRIME = option('--prime', quick ? 2 : 10);
const TOKEN_FLOOR = 'floor-token';
const children = [];

function start(script, env, ready = /"port":(\d+)/) {
  const child = spawn(process.execPath, [script], { env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'inherit'] });
  children.push(child);
  return new Promise((resolve, reject) => {
    let out = '';
    const onData = (d) => {
      out += d;
      const match = ready.exec(out);
      if (match) {
        child.stdout.off('data', onData);
        child.stdout.resume(); // keep draining (the gateway's access log)
        resolve({ pid: child.pid, url: match[1].startsWith('http') ? match[1] : `http://127.0.0.1:${match[1]}` });
      }
    };
    child.stdout.on('data', onData);
    child.once('exit', (code) => reject(new Error(`${script} exited ${code}: ${out}`)));
  });
}

/** Starts a peer process and waits until `readyUrl` answers (any HTTP status). */
async function startPeer(command, argv, env, readyUrl, timeoutMs = 90_000) {
  const child = spawn(command, argv, { env: { ...process.env, ...env }, stdio: ['ignore', 'ignore', 'ignore'] });
  children.push(child);
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (child.exitCode !== null) throw new Error(`${command} exited ${child.exitCode}`);
    const up = await request(readyUrl).then((r) => r.body.dump().then(() => true), () => false);
    if (up) return child.pid;
    await new Promise((r) => setTimeout(r, 250));
  }
  throw new Error(`${command} did not start`);
}

const freePort = () => 20000 + Math.floor(Math.random() * 20000);

function cpuMs(pid) {
  const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ');
  return ((Number(fields[11]) + Number(fields[12])) * 1000) / 100; // utime + stime, CLK_TCK 100
}
function rssMb(pid) {
  return Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))[1]) / 1024;
}
const pct = (xs, p) => (xs.length ? [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor((p / 100) * xs.length))] : NaN);

const body = (stream) => JSON.stringify({ model: 'bench', messages: [{ role: 'user', content: 'Say something.' }], ...(stream ? { stream: true } : {}) });

async function validate(target) {
  const headers = { authorization: `Bearer ${target.token}`, 'content-type': 'application/json', ...target.headers };
  const plain = await request(`${target.url}/v1/chat/completions`, { method: 'POST', headers, body: body(false) });
  const json = await plain.body.json();
  if (plain.statusCode !== 200 || json.object !== 'chat.completion' || !json.choices?.[0]?.message?.content) throw new Error(`${target.name}: bad completion ${JSON.stringify(json)}`);
  const streamed = await request(`${target.url}/v1/chat/completions`, { method: 'POST', headers, body: body(true) });
  const text = await streamed.body.text();
  if (streamed.statusCode !== 200 || !text.trimEnd().endsWith('data: [DONE]') || !/"content": ?"word "/.test(text)) throw new Error(`${target.name}: bad stream ${text.slice(0, 300)}`);
}

async function nonStreaming(target, connections, duration) {
  const result = await autocannon({
    url: `${target.url}/v1/chat/completions`,
    method: 'POST',
    connections,
    duration,
    headers: { authorization: `Bearer ${target.token}`, 'content-type': 'application/json', ...target.headers },
    body: body(false),
  });
  return { requests: result.requests.total, rps: result.requests.average, p50: result.latency.p50, p90: result.latency.p90, p99: result.latency.p99, errors: result.errors + result.non2xx };
}

async function streaming(target, connections, duration) {
  const deadline = Date.now() + duration * 1000;
  const ttfb = [];
  const totals = [];
  let errors = 0;
  await Promise.all(
    Array.from({ length: connections }, async () => {
      while (Date.now() < deadline) {
        const started = performance.now();
        try {
          const res = await request(`${target.url}/v1/chat/completions`, { method: 'POST', headers: { authorization: `Bearer ${target.token}`, 'content-type': 'application/json', ...target.headers }, body: body(true) });
          let first = 0;
          for await (const _ of res.body) if (!first) first = performance.now();
          if (res.statusCode !== 200) errors++;
          ttfb.push(first - started);
          totals.push(performance.now() - started);
        } catch {
          errors++;
        }
      }
    }),
  );
  return { requests: totals.length, rps: totals.length / duration, p50: pct(totals, 50), p90: pct(totals, 90), p99: pct(totals, 99), ttfbP50: pct(ttfb, 50), errors };
}

async function measure(target, scenario) {
  const cpuBefore = cpuMs(target.pid);
  let peak = rssMb(target.pid);
  const sampler = setInterval(() => (peak = Math.max(peak, rssMb(target.pid))), 100);
  const run = scenario.stream ? await streaming(target, scenario.connections, DURATION) : await nonStreaming(target, scenario.connections, DURATION);
  clearInterval(sampler);
  const cpu = cpuMs(target.pid) - cpuBefore;
  return { scenario: scenario.name, target: target.name, ...run, cpuMsPer1000: run.requests ? (cpu / run.requests) * 1000 : NaN, peakRssMb: peak };
}

async function main() {
  const chunks = 20;
  const upstream = await start(join(root, 'bench/standin-upstream.mjs'), { CHUNKS: String(chunks), LATENCY_MS: '0', GAP_MS: '0' });
  const floor = await start(join(root, 'bench/floor-proxy.mjs'), { UPSTREAM: upstream.url, TOKEN: TOKEN_FLOOR });
  const dir = mkdtempSync(join(tmpdir(), 'switchyard-bench-'));
  const prefix = `sy-bench:${Date.now()}:`;
  writeFileSync(join(dir, 'switchyard.yaml'), `server: { port: 0, host: 127.0.0.1 }
redis: { keyPrefix: "${prefix}" }
admin: { apiKey: bench-admin }
backends:
  standin: { type: openai, baseUrl: "${upstream.url}/v1", apiKey: upstream-key, maxConnections: 256 }
models:
  bench: { backend: standin, upstreamModel: bench }
teams:
  bench: { models: ["*"], limits: { requestsPerMinute: 100000000, tokensPerDay: 100000000000 } }
`);
  const gateway = await start(join(root, 'dist/main.js'), { SWITCHYARD_CONFIG: join(dir, 'switchyard.yaml') }, /"url":"(http:[^"]+)"/);
  const issued = await (await request(`${gateway.url}/admin/v1/teams/bench/tokens`, { method: 'POST', headers: { authorization: 'Bearer bench-admin' } })).body.json();
  const targets = [
    { name: 'direct', url: upstream.url, pid: upstream.pid, token: 'none' },
    { name: 'floor (node proxy)', url: floor.url, pid: floor.pid, token: TOKEN_FLOOR },
    { name: 'switchyard', url: gateway.url, pid: gateway.pid, token: issued.token },
  ];
  if (!args.includes('--no-peers')) targets.push(...(await startPeers(upstream.url, dir)));
  const scenarios = [
    { name: 'plain c=1', connections: 1 },
    { name: 'plain c=32', connections: 32 },
    { name: 'plain c=128', connections: 128 },
    { name: `stream ${chunks} chunks c=1`, connections: 1, stream: true },
    { name: `stream ${chunks} chunks c=32`, connections: 32, stream: true },
  ];
  const rows = [];
  for (const target of targets) {
    await validate(target);
    await nonStreaming(target, 8, PRIME); // unmeasured: let V8 optimise
  }
  for (const scenario of scenarios) for (const target of targets) rows.push(await measure(target, scenario));
  for (const row of rows) {
    const direct = rows.find((r) => r.scenario === row.scenario && r.target === 'direct');
    row.addedP50Ms = row.p50 - direct.p50;
  }
  const fmt = (n, d = 1) => (Number.isFinite(n) ? n.toFixed(d) : '-');
  console.table(rows.map((r) => ({ scenario: r.scenario, target: r.target, 'req/s': fmt(r.rps, 0), p50: fmt(r.p50, 2), p90: fmt(r.p90, 2), p99: fmt(r.p99, 2), '+p50': fmt(r.addedP50Ms, 2), ttfb50: fmt(r.ttfbP50, 2), 'cpu ms/1k': fmt(r.cpuMsPer1000, 0), 'rss MB': fmt(r.peakRssMb, 0), errors: r.errors })));
  mkdirSync(join(root, 'bench/results'), { recursive: true });
  writeFileSync(join(root, 'bench/results/gateway.json'), JSON.stringify({ date: new Date().toISOString(), duration: DURATION, prime: PRIME, rows }, null, 2));
  const md = ['| scenario | target | req/s | p50 ms | p99 ms | +p50 ms | TTFB p50 ms | CPU ms / 1000 req | peak RSS MB | errors |', '|---|---|---|---|---|---|---|---|---|---|'];
  for (const r of rows) md.push(`| ${r.scenario} | ${r.target} | ${fmt(r.rps, 0)} | ${fmt(r.p50, 2)} | ${fmt(r.p99, 2)} | ${fmt(r.addedP50Ms, 2)} | ${fmt(r.ttfbP50, 2)} | ${fmt(r.cpuMsPer1000, 0)} | ${fmt(r.peakRssMb, 0)} | ${r.errors} |`);
  writeFileSync(join(root, 'bench/results/gateway.md'), md.join('\n') + '\n');
}

async function startPeers(upstreamUrl, dir) {
  const install = spawn('bash', [join(root, 'bench/install-peers.sh')], { stdio: 'inherit' });
  if ((await new Promise((r) => install.once('exit', r))) !== 0) throw new Error('installing the peers failed');
  const peers = join(root, 'bench/peers');
  const portkeyPort = freePort();
  const portkeyPid = await startPeer(
    process.execPath,
    ['--import', join(peers, 'loopback.mjs'), join(peers, 'node_modules/@portkey-ai/gateway/build/start-server.js'), `--port=${portkeyPort}`, '--headless'],
    { NODE_ENV: 'production' },
    `http://127.0.0.1:${portkeyPort}/`,
  );
  const litellmPort = freePort();
  writeFileSync(join(dir, 'litellm.yaml'), `model_list:\n  - model_name: bench\n    litellm_params:\n      model: openai/bench\n      api_base: ${upstreamUrl}/v1\n      api_key: upstream-key\ngeneral_settings:\n  master_key: sk-bench-litellm\n`);
  const litellmPid = await startPeer(join(peers, 'litellm-venv/bin/litellm'), ['--config', join(dir, 'litellm.yaml'), '--host', '127.0.0.1', '--port', String(litellmPort), '--num_workers', '1'], { LITELLM_LOG: 'ERROR' }, `http://127.0.0.1:${litellmPort}/health/liveliness`);
  return [
    { name: 'portkey', url: `http://127.0.0.1:${portkeyPort}`, pid: portkeyPid, token: 'upstream-key', headers: { 'x-portkey-provider': 'openai', 'x-portkey-custom-host': `${upstreamUrl}/v1` } },
    { name: 'litellm', url: `http://127.0.0.1:${litellmPort}`, pid: litellmPid, token: 'sk-bench-litellm' },
  ];
}

main()
  .catch((error) => {
    console.error(error);
    process.exitCode = 1;
  })
  .finally(() => {
    for (const child of children) child.kill('SIGTERM');
  });
