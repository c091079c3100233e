#!/usr/bin/env node
// Switchyard side by side with the direct upstream, the floor proxy and the peers, in one run on one machine.
//   npm run bench [-- --duration S] [--prime S] [--quick] [--no-peers] [--scenarios a,b] [--targets a,b]
//   npm run bench -- --held-streams N   streams the held-streams scenario holds (default 8000; --quick 500)
//   npm run bench -- --soak [N]      N requests (default 100000) through one Switchyard, RSS sampled each second
// (after npm run build; needs Redis). Portkey and LiteLLM are installed by bench/install-peers.sh on first use,
// under bench/peers/. Every server listens on 127.0.0.1 only and every load is bounded in time.
// --scenarios / --targets keep only the names containing one of the words ('direct' is always measured: added
// latency is relative to it). Prints a table; writes bench/results/gateway.{json,md} (or soak.{json,md}).
import { spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import autocannon from 'autocannon';
import { request } from 'undici';
import { bigPrompt } from './lib/big-prompt.mjs';
import { heldStreams, reportHeldStreams } from './held-streams.mjs';
import { cpuMs, freePort, pct, rssMb, start, startCommand, startPeer, stopAll } from './lib/processes.mjs';
import { redisPid, startRedisCluster } from './lib/redis-cluster.mjs';
import { PRODUCTION_NODE_ARGS } from './lib/switchyard.mjs';

const root = join(import.meta.dirname, '..');
const args = process.argv.slice(2);
const quick = args.includes('--quick');
const option = (name, fallback) =>
  args.includes(name) && !String(args[args.indexOf(name) + 1] ?? '-').startsWith('-')
    ? Number(args[args.indexOf(name) + 1])
    : fallback;
const listOption = (name) => (args.includes(name) ? args[args.indexOf(name) + 1].split(',') : undefined);
const keep = (list, name) => !list || list.some((word) => name.includes(word));
const DURATION = option('--duration', quick ? 3 : 10);
const PRIME = option('--prime', quick ? 2 : 10);
const TOKEN_FLOOR = 'floor-token';

const openaiBody = (model, stream) =>
  JSON.stringify({
    model,
    messages: [{ role: 'user', content: 'Say something.' }],
    ...(stream ? { stream: true } : {}),
  });
const anthropicBody = (model, stream) =>
  JSON.stringify({
    model,
    max_tokens: 256,
    messages: [{ role: 'user', content: 'Say something.' }],
    ...(stream ? { stream: true } : {}),
  });

/** What a target is sent for a scenario: the OpenAI route with the scenario's model, or a target's own wire format. */
function requestFor(target, scenario) {
  const model = target.models?.[scenario.model] ?? scenario.model;
  const headers = {
    authorization: `Bearer ${target.token}`,
    'content-type': 'application/json',
    ...target.headers,
  };
  if (target.family === 'anthropic')
    return {
      path: '/v1/messages',
      headers: { ...headers, 'x-api-key': 'k', 'anthropic-version': '2023-06-01' },
      body: anthropicBody(model, scenario.stream),
    };
  return { path: '/v1/chat/completions', headers, body: openaiBody(model, scenario.stream) };
}

/** A target that fails fast is not a result: check a plain and a streamed answer before timing. */
async function validate(target, scenario) {
  for (const url of target.urls) {
    const plain = requestFor(target, { ...scenario, stream: false });
    const answer = await request(`${url}${plain.path}`, {
      method: 'POST',
      headers: plain.headers,
      body: plain.body,
    });
    const json = await answer.body.json();
    const expected = Array.from({ length: scenario.chunks }, (_, i) => `w${i} `).join('');
    const text =
      target.family === 'anthropic' ? json.content?.[0]?.text : json.choices?.[0]?.message?.content;
    if (answer.statusCode !== 200 || text !== expected)
      throw new Error(`${target.name}: bad answer for ${scenario.model}: ${JSON.stringify(json)}`);
    const streamed = requestFor(target, { ...scenario, stream: true });
    const sse = await (
      await request(`${url}${streamed.path}`, {
        method: 'POST',
        headers: streamed.headers,
        body: streamed.body,
      })
    ).body.text();
    const events = sse
      .split('\n')
      .filter((line) => line.startsWith('data: {'))
      .map((line) => JSON.parse(line.slice(6)));
    const streamedText = events
      .map((e) =>
        target.family === 'anthropic' ? (e.delta?.text ?? '') : (e.choices?.[0]?.delta?.content ?? ''),
      )
      .join('');
    const ended =
      target.family === 'anthropic' ? sse.includes('message_stop') : sse.trimEnd().endsWith('data: [DONE]');
    if (!ended || streamedText !== expected)
      throw new Error(
        `${target.name}: stream for ${scenario.model} is not the whole answer: ${streamedText.slice(0, 100)}... ${sse.slice(-300)}`,
      );
  }
}

async function nonStreaming(target, scenario, duration) {
  const { path, headers, body } = requestFor(target, scenario);
  // Several replicas share the connections; their results add up.
  const runs = await Promise.all(
    target.urls.map((url) =>
      autocannon({
        url: `${url}${path}`,
        method: 'POST',
        connections: Math.max(1, scenario.connections / target.urls.length),
        duration,
        headers,
        body,
      }),
    ),
  );
  const latencies = runs.map((r) => r.latency);
  return {
    requests: runs.reduce((n, r) => n + r.requests.total, 0),
    rps: runs.reduce((n, r) => n + r.requests.average, 0),
    p50: Math.max(...latencies.map((l) => l.p50)),
    p90: Math.max(...latencies.map((l) => l.p90)),
    p99: Math.max(...latencies.map((l) => l.p99)),
    errors: runs.reduce((n, r) => n + r.errors + r.non2xx, 0),
  };
}

/** A closed loop of undici requests per connection, timing the first body byte and the whole answer. */
async function streaming(target, scenario, duration) {
  const { path, headers, body } = requestFor(target, scenario);
  const deadline = Date.now() + duration * 1000;
  const ttfb = [];
  const totals = [];
  let errors = 0;
  await Promise.all(
    Array.from({ length: scenario.connections }, async (_, i) => {
      const url = `${target.urls[i % target.urls.length]}${path}`;
      while (Date.now() < deadline) {
        const started = performance.now();
        try {
          const res = await request(url, { method: 'POST', headers, body });
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
  return {
    requests: totals.length,
    rps: totals.length / duration,
    p50: pct(totals, 50),
    p90: pct(totals, 90),
    p99: pct(totals, 99),
    ttfbP50: pct(ttfb, 50),
    ttfbP99: pct(ttfb, 99),
    errors,
  };
}

async function measure(target, scenario) {
  const cpuBefore = target.pids.reduce((n, pid) => n + cpuMs(pid), 0);
  const redisCpu = () => (target.redisPids ?? []).reduce((n, pid) => n + cpuMs(pid), 0);
  const redisCpuBefore = redisCpu();
  const rss = () => target.pids.reduce((n, pid) => n + rssMb(pid), 0);
  let peak = rss();
  const sampler = setInterval(() => (peak = Math.max(peak, rss())), 100);
  // autocannon reports whole milliseconds; one connection is timed by our own client to the microsecond.
  const run =
    scenario.stream || scenario.connections === 1
      ? await streaming(target, scenario, DURATION)
      : await nonStreaming(target, scenario, DURATION);
  clearInterval(sampler);
  const cpu = target.pids.reduce((n, pid) => n + cpuMs(pid), 0) - cpuBefore;
  const perThousand = (ms) => (run.requests ? (ms / run.requests) * 1000 : NaN);
  const redisMsPer1000 = target.redisPids ? perThousand(redisCpu() - redisCpuBefore) : undefined;
  return {
    scenario: scenario.name,
    target: target.name,
    ...run,
    cpuMsPer1000: perThousand(cpu),
    redisCpuMsPer1000: redisMsPer1000,
    peakRssMb: peak,
  };
}

/**
 * `requestLog`: 'metadata' (the default: entries, no content), 'off', or 'content' (the bench team keeps content).
 * `otlpUrl`: traces over OTLP protobuf to it, every trace sampled (docs/tracing.md).
 */
function switchyardConfig(upstreamUrl, prefix, clusterNodes, requestLog = 'metadata', otlpUrl = undefined) {
  const cluster = clusterNodes
    ? `, cluster: { nodes: [${clusterNodes.map((node) => `"${node}"`).join(', ')}] }`
    : '';
  const logging = requestLog === 'off' ? 'logging: { requests: { enabled: false } }\n' : '';
  const teamLogging = requestLog === 'content' ? ', logging: { content: full }' : '';
  const telemetry = otlpUrl
    ? `telemetry: { otlp: { endpoint: "${otlpUrl}", protocol: http/protobuf, sampleRatio: 1 } }\n`
    : '';
  return `server: { port: 0, host: 127.0.0.1 }
redis: { keyPrefix: "${prefix}"${cluster} }
admin: { apiKey: bench-admin }
backends:
  standin: { type: openai, baseUrl: "${upstreamUrl}/v1", apiKey: upstream-key, maxConnections: 256 }
  standin-anthropic: { type: anthropic, baseUrl: "${upstreamUrl}/v1", apiKey: upstream-key, maxConnections: 256 }
  standin-2: { type: openai, baseUrl: "${upstreamUrl}/v1", apiKey: upstream-key, maxConnections: 256 }
  standin-3: { type: openai, baseUrl: "${upstreamUrl}/v1", apiKey: upstream-key, maxConnections: 256 }
models:
  bench: { backend: standin, upstreamModel: bench }
  bench-3-deployments:
    deployments:
      - { backend: standin, upstreamModel: bench, weight: 2 }
      - { backend: standin-2, upstreamModel: bench }
      - { backend: standin-3, upstreamModel: bench }
  bench-200: { backend: standin, upstreamModel: bench-200 }
  bench-claude: { backend: standin-anthropic, upstreamModel: claude-bench }
${logging}${telemetry}teams:
  bench: { models: ["*"], limits: { requestsPerMinute: 100000000, tokensPerDay: 100000000000 }${teamLogging} }
`;
}

const startSwitchyard = (configPath) =>
  start(
    [...PRODUCTION_NODE_ARGS, join(root, 'dist/main.js')],
    { SWITCHYARD_CONFIG: configPath },
    /"url":"(http:[^"]+)"/,
  );

/** Upstream, floor and Switchyard (one, and a second replica on the same Redis prefix). */
async function startCore(dir) {
  const upstream = await start(join(root, 'bench/standin-upstream.mjs'), {
    CHUNKS: '20',
    LATENCY_MS: '0',
    GAP_MS: '0',
  });
  const floor = await start(join(root, 'bench/floor-proxy.mjs'), {
    UPSTREAM: upstream.url,
    TOKEN: TOKEN_FLOOR,
  });
  writeFileSync(join(dir, 'switchyard.yaml'), switchyardConfig(upstream.url, `sy-bench:${Date.now()}:`));
  const [first, second] = [
    await startSwitchyard(join(dir, 'switchyard.yaml')),
    await startSwitchyard(join(dir, 'switchyard.yaml')),
  ];
  const issued = await (
    await request(`${first.url}/admin/v1/teams/bench/tokens`, {
      method: 'POST',
      headers: { authorization: 'Bearer bench-admin' },
    })
  ).body.json();
  return { upstream, floor, first, second, token: issued.token };
}

/**
 * The controls for the topology target: one replica, and four replicas (two more started), on the one Redis. Four
 * replicas on two cores cost more per request than one whatever the Redis, so the cluster is compared with both.
 */
async function singleRedisTargets(dir, [first, second], token) {
  const redisPids = [await redisPid(6379)].filter(Boolean);
  const more = [];
  for (let i = 0; i < 2; i++) more.push(await startSwitchyard(join(dir, 'switchyard.yaml')));
  const four = [first, second, ...more];
  return [
    { name: 'switchyard, one Redis', urls: [first.url], pids: [first.pid], redisPids, token },
    {
      name: 'switchyard x4 replicas, one Redis',
      urls: four.map((r) => r.url),
      pids: four.map((r) => r.pid),
      redisPids,
      token,
    },
  ];
}

/**
 * The topology target: four Switchyard replicas sharing a three-master Redis Cluster (with replicas), its CPU the
 * four gateways', and the cluster's six servers' CPU reported apart. Compared with one replica on one Redis.
 */
async function startClusterReplicas(dir, upstreamUrl) {
  const cluster = await startRedisCluster(dir);
  writeFileSync(
    join(dir, 'switchyard-cluster.yaml'),
    switchyardConfig(upstreamUrl, `sy-bench:${Date.now()}:`, cluster.nodes),
  );
  const replicas = [];
  for (let i = 0; i < 4; i++) replicas.push(await startSwitchyard(join(dir, 'switchyard-cluster.yaml')));
  const issued = await (
    await request(`${replicas[0].url}/admin/v1/teams/bench/tokens`, {
      method: 'POST',
      headers: { authorization: 'Bearer bench-admin' },
    })
  ).body.json();
  return {
    name: 'switchyard x4 replicas, Redis Cluster',
    urls: replicas.map((r) => r.url),
    pids: replicas.map((r) => r.pid),
    redisPids: cluster.pids,
    token: issued.token,
  };
}

/**
 * The request log's cost: the default Switchyard (metadata only), the same with the log off and with content kept,
 * each on a Redis prefix of its own; compared by gateway CPU per request. And tracing's: the default
 * one with every trace sent over OTLP to a receiver in this process that accepts and discards.
 */
async function startRequestLogTargets(dir, upstreamUrl) {
  const sink = createServer((req, res) => {
    req.resume();
    req.on('end', () => res.writeHead(200, { 'content-type': 'application/x-protobuf' }).end());
  });
  await new Promise((resolve) => sink.listen(0, '127.0.0.1', resolve));
  sink.unref();
  const otlpUrl = `http://127.0.0.1:${sink.address().port}`;
  const targets = [];
  // Each a fresh replica alone on its Redis prefix, alike but for the log: the shared replica of the other scenarios
  // has a second one on its prefix and a different past, which weighed more than the log itself.
  for (const [mode, name, otlp] of [
    ['metadata', 'switchyard, request log (metadata)'],
    ['off', 'switchyard, request log off'],
    ['content', 'switchyard, request log with content'],
    ['metadata', 'switchyard, request log (metadata), tracing on', otlpUrl],
  ]) {
    const label = `${mode}${otlp ? '-traced' : ''}`;
    const path = join(dir, `switchyard-log-${label}.yaml`);
    writeFileSync(
      path,
      switchyardConfig(upstreamUrl, `sy-bench:${Date.now()}:${label}:`, undefined, mode, otlp),
    );
    const gateway = await startSwitchyard(path);
    const issued = await (
      await request(`${gateway.url}/admin/v1/teams/bench/tokens`, {
        method: 'POST',
        headers: { authorization: 'Bearer bench-admin' },
      })
    ).body.json();
    targets.push({ name, urls: [gateway.url], pids: [gateway.pid], token: issued.token });
  }
  return targets;
}

async function main() {
  const dir = mkdtempSync(join(tmpdir(), 'switchyard-bench-'));
  const { upstream, floor, first, second, token } = await startCore(dir);
  const one = (name, process, extra) => ({ name, urls: [process.url], pids: [process.pid], ...extra });
  const targets = [
    one('direct', upstream, { token: 'none' }),
    one('floor (node proxy)', floor, { token: TOKEN_FLOOR }),
    one('switchyard', first, { token }),
    { name: 'switchyard x2 replicas', urls: [first.url, second.url], pids: [first.pid, second.pid], token },
  ];
  if (!args.includes('--no-peers') && keep(listOption('--targets'), 'portkey litellm tensorzero vllm-router'))
    targets.push(...(await startPeers(upstream.url, dir)));
  const topologyWanted =
    keep(listOption('--scenarios'), 'Redis topologies') && keep(listOption('--targets'), 'switchyard');
  const topologyTargets = topologyWanted
    ? [
        targets[0],
        ...(await singleRedisTargets(dir, [first, second], token)),
        await startClusterReplicas(dir, upstream.url),
      ]
    : [];
  const logWanted =
    keep(listOption('--scenarios'), 'request log') && keep(listOption('--targets'), 'switchyard');
  const logTargets = logWanted ? [targets[0], ...(await startRequestLogTargets(dir, upstream.url))] : [];
  const anthropicTargets = [
    one('direct', upstream, {
      token: 'none',
      family: 'anthropic',
      models: { 'bench-claude': 'claude-bench' },
    }),
    one('switchyard', first, { token }),
  ];

  const openai = (name, model, chunks, connections, stream) => ({
    name,
    model,
    chunks,
    connections,
    stream,
    targets,
  });
  const scenarios = [
    openai('plain c=1', 'bench', 20, 1, false),
    openai('plain c=32', 'bench', 20, 32, false),
    openai('plain c=128', 'bench', 20, 128, false),
    // The routing layer's cost: one model served by three deployments (weighted), against 'plain c=32'.
    {
      ...openai('plain c=32, 3 deployments', 'bench-3-deployments', 20, 32, false),
      targets: targets.filter((t) => t.name === 'direct' || t.name.startsWith('switchyard')),
    },
    openai('stream 20 chunks c=1', 'bench', 20, 1, true),
    openai('stream 20 chunks c=32', 'bench', 20, 32, true),
    openai('stream 200 chunks c=1', 'bench-200', 200, 1, true),
    openai('stream 200 chunks c=32', 'bench-200', 200, 32, true),
    {
      name: 'anthropic stream 20 chunks c=1',
      model: 'bench-claude',
      chunks: 20,
      connections: 1,
      stream: true,
      targets: anthropicTargets,
    },
    {
      name: 'anthropic stream 20 chunks c=32',
      model: 'bench-claude',
      chunks: 20,
      connections: 32,
      stream: true,
      targets: anthropicTargets,
    },
    // The request log's cost per request: off, metadata (the default), with content (docs/performance.md).
    { ...openai('plain c=32, request log', 'bench', 20, 32, false), targets: logTargets, interleaved: true },
    {
      ...openai('stream 20 chunks c=32, request log', 'bench', 20, 32, true),
      targets: logTargets,
      interleaved: true,
    },
    // Past one machine: four replicas on a Redis Cluster against one replica on one Redis (CPU summed per side).
    { ...openai('plain c=32, Redis topologies', 'bench', 20, 32, false), targets: topologyTargets },
    { ...openai('plain c=128, Redis topologies', 'bench', 20, 128, false), targets: topologyTargets },
  ].filter((s) => keep(listOption('--scenarios'), s.name));
  for (const s of scenarios)
    s.targets = s.targets.filter((t) => t.name === 'direct' || keep(listOption('--targets'), t.name));

  for (const s of scenarios) for (const target of s.targets) await validate(target, s);
  for (const target of [...targets, ...topologyTargets.slice(1), ...logTargets.slice(1)].filter((t) =>
    scenarios.some((s) => s.targets.includes(t)),
  )) {
    await nonStreaming(target, { model: 'bench', connections: 8 }, PRIME); // unmeasured: let V8 optimise
    await streaming(target, { model: 'bench', connections: 8, stream: true }, Math.max(1, PRIME / 2));
  }
  const rows = [];
  for (const scenario of scenarios)
    if (scenario.interleaved) rows.push(...(await measureInterleaved(scenario)));
    else for (const target of scenario.targets) rows.push(await measure(target, scenario));
  for (const row of rows) {
    const direct = rows.find((r) => r.scenario === row.scenario && r.target === 'direct');
    row.addedP50Ms = row.p50 - direct.p50;
    if (row.ttfbP50 !== undefined) row.addedTtfbP50Ms = row.ttfbP50 - direct.ttfbP50;
  }
  report(rows, 'gateway', { duration: DURATION, prime: PRIME });
  reportRequestLogCost(rows);
  if (keep(listOption('--scenarios'), 'big prompt'))
    reportBigPrompt(await bigPrompt({ url: first.url, token, pid: first.pid }, DURATION));
  // Agents' long streams held at once by a fresh replica (bench/held-streams.mjs): bytes and CPU per stream.
  if (keep(listOption('--scenarios'), 'held streams'))
    reportHeldStreams(
      // Opened 200 a second, each long enough to outlast the opening: faster, a loaded machine's listen backlog
      // overflows and the run measures failed opens (docs/performance.md, held streams).
      await heldStreams({
        streams: option('--held-streams', quick ? 500 : 8000),
        seconds: quick ? 10 : 60,
        openPer100Ms: 20,
      }),
    );
}

/**
 * Targets whose difference is a few percent (the request log on and off): each measured in ROUNDS short turns, the
 * targets taking turns, so a machine that gets busier or quieter during the run weighs on each alike; a target's
 * row adds its turns up (requests, CPU) and keeps its slowest percentiles.
 */
const ROUNDS = 4;
async function measureInterleaved(scenario) {
  const turns = new Map(scenario.targets.map((t) => [t.name, []]));
  const turn = { ...scenario };
  for (let round = 0; round < ROUNDS; round++)
    for (const target of scenario.targets) turns.get(target.name).push(await measure(target, turn));
  return scenario.targets.map((target) => {
    const list = turns.get(target.name);
    const requests = list.reduce((n, r) => n + r.requests, 0);
    const cpu = list.reduce((n, r) => n + (r.cpuMsPer1000 * r.requests) / 1000, 0);
    const max = (key) => Math.max(...list.map((r) => r[key] ?? NaN));
    return {
      ...list[0],
      requests,
      rps: list.reduce((n, r) => n + r.rps, 0) / list.length,
      p50: max('p50'),
      p90: max('p90'),
      p99: max('p99'),
      ttfbP50: list[0].ttfbP50 === undefined ? undefined : max('ttfbP50'),
      errors: list.reduce((n, r) => n + r.errors, 0),
      cpuMsPer1000: (cpu / requests) * 1000,
      peakRssMb: max('peakRssMb'),
      cpuMsPer1000ByRound: list.map((r) => r.cpuMsPer1000),
    };
  });
}

/** The request log's CPU per request against the same gateway with it off, measured in the same run. */
function reportRequestLogCost(rows) {
  for (const scenario of new Set(
    rows.filter((r) => r.scenario.endsWith('request log')).map((r) => r.scenario),
  )) {
    const cpu = (target) => rows.find((r) => r.scenario === scenario && r.target === target)?.cpuMsPer1000;
    const off = cpu('switchyard, request log off');
    const ratio = (target) => fmt(cpu(target) / off, 3);
    const byRound = (target) =>
      rows
        .find((r) => r.scenario === scenario && r.target === target)
        ?.cpuMsPer1000ByRound?.map((value) => fmt(value, 0))
        .join(', ');
    console.log(
      `${scenario}: gateway CPU per request, metadata x${ratio('switchyard, request log (metadata)')}, with content x${ratio('switchyard, request log with content')}, metadata and tracing x${ratio('switchyard, request log (metadata), tracing on')} (against the log off; CPU ms/1000 by round: off ${byRound('switchyard, request log off')}; metadata ${byRound('switchyard, request log (metadata)')}; content ${byRound('switchyard, request log with content')}; tracing ${byRound('switchyard, request log (metadata), tracing on')})`,
    );
  }
}

/** Gateway CPU per long prompt against a bare parse + serialise of the same body; small requests' p99 with them. */
function reportBigPrompt({ rows, contention }) {
  console.table(
    rows.map((r) => ({
      prompt: r.prompt,
      'body KB': r.bodyKb,
      'gateway CPU ms': fmt(r.gatewayCpuMs, 2),
      'bare JSON CPU ms': fmt(r.bareJsonCpuMs, 2),
      'x bare': fmt(r.ratio, 2),
      'above ~1k, x bare': fmt(r.marginalRatio, 2),
      'x bare, strings only': fmt(r.stringsRatio, 2),
      'p50 ms': fmt(r.latencyP50Ms, 2),
    })),
  );
  const line = `small requests' p99: ${fmt(contention.smallP99AloneMs, 2)} ms alone, ${fmt(contention.smallP99WithBigMs, 2)} ms while ${contention.bigPromptsSent} ~100k-token prompts passed (x${fmt(contention.ratio, 2)}; ${contention.rounds} rounds of ${contention.secondsPerPhase} s each)`;
  console.log(line);
  const md = [
    '| prompt | body KB | gateway CPU ms | bare JSON CPU ms (bytes in and out) | x bare | above ~1k, x bare | bare, strings only | x bare, strings only | p50 ms |',
    '|---|---|---|---|---|---|---|---|---|',
    ...rows.map(
      (r) =>
        `| ${r.prompt} | ${r.bodyKb} | ${fmt(r.gatewayCpuMs, 2)} | ${fmt(r.bareJsonCpuMs, 2)} | ${fmt(r.ratio, 2)} | ${fmt(r.marginalRatio, 2)} | ${fmt(r.bareStringsCpuMs, 2)} | ${fmt(r.stringsRatio, 2)} | ${fmt(r.latencyP50Ms, 2)} |`,
    ),
  ];
  mkdirSync(join(root, 'bench/results'), { recursive: true });
  writeFileSync(
    join(root, 'bench/results/big-prompt.json'),
    JSON.stringify({ date: new Date().toISOString(), rows, contention }, null, 2),
  );
  writeFileSync(join(root, 'bench/results/big-prompt.md'), `${md.join('\n')}\n\n${line}\n`);
}

const fmt = (n, d = 1) => (Number.isFinite(n) ? n.toFixed(d) : '-');
const COLUMNS = [
  ['scenario', (r) => r.scenario],
  ['target', (r) => r.target],
  ['req/s', (r) => fmt(r.rps, 0)],
  ['p50 ms', (r) => fmt(r.p50, 2)],
  ['p90 ms', (r) => fmt(r.p90, 2)],
  ['p99 ms', (r) => fmt(r.p99, 2)],
  ['+p50 ms', (r) => fmt(r.addedP50Ms, 2)],
  ['TTFB p50 ms', (r) => fmt(r.ttfbP50, 2)],
  ['+TTFB p50 ms', (r) => fmt(r.addedTtfbP50Ms, 2)],
  ['CPU ms/1000 req', (r) => fmt(r.cpuMsPer1000, 0)],
  ['Redis CPU ms/1000 req', (r) => fmt(r.redisCpuMsPer1000, 0)],
  ['peak RSS MB', (r) => fmt(r.peakRssMb, 0)],
  ['errors', (r) => String(r.errors)],
];

function report(rows, name, meta) {
  console.table(rows.map((r) => Object.fromEntries(COLUMNS.map(([title, cell]) => [title, cell(r)]))));
  mkdirSync(join(root, 'bench/results'), { recursive: true });
  const json = JSON.stringify({ date: new Date().toISOString(), ...meta, rows }, null, 2);
  writeFileSync(join(root, `bench/results/${name}.json`), json);
  // Kept per run too, for bench/spread.mjs (the spread of two runs).
  writeFileSync(
    join(root, `bench/results/${name}-${new Date().toISOString().replace(/[:.]/g, '-')}.json`),
    json,
  );
  const md = [
    `| ${COLUMNS.map(([t]) => t).join(' | ')} |`,
    `|${COLUMNS.map(() => '---').join('|')}|`,
    ...rows.map((r) => `| ${COLUMNS.map(([, cell]) => cell(r)).join(' | ')} |`),
  ];
  writeFileSync(join(root, `bench/results/${name}.md`), md.join('\n') + '\n');
}

/** 100k requests (half plain, half streamed) through one Switchyard; RSS must stay flat once warm. */
async function soak(total) {
  const dir = mkdtempSync(join(tmpdir(), 'switchyard-soak-'));
  const { first, token } = await startCore(dir);
  const headers = { authorization: `Bearer ${token}`, 'content-type': 'application/json' };
  await autocannon({
    url: `${first.url}/v1/chat/completions`,
    method: 'POST',
    connections: 8,
    duration: PRIME,
    headers,
    body: openaiBody('bench', false),
  });
  const samples = [];
  const started = Date.now();
  const sampler = setInterval(
    () => samples.push({ s: (Date.now() - started) / 1000, rssMb: rssMb(first.pid) }),
    1000,
  );
  const result = await autocannon({
    url: `${first.url}/v1/chat/completions`,
    method: 'POST',
    connections: 32,
    amount: total,
    timeout: 30,
    headers,
    requests: [{ body: openaiBody('bench', false) }, { body: openaiBody('bench', true) }],
  });
  clearInterval(sampler);
  const tenth = Math.max(1, Math.floor(samples.length / 10));
  const mean = (xs) => xs.reduce((n, x) => n + x.rssMb, 0) / xs.length;
  const summary = {
    requests: result.requests.total,
    errors: result.errors + result.non2xx,
    seconds: (Date.now() - started) / 1000,
    firstTenthMb: mean(samples.slice(0, tenth)),
    lastTenthMb: mean(samples.slice(-tenth)),
    maxMb: Math.max(...samples.map((x) => x.rssMb)),
  };
  console.log(
    `soak: ${summary.requests} requests in ${fmt(summary.seconds)} s, ${summary.errors} errors; RSS first tenth ${fmt(summary.firstTenthMb)} MB, last tenth ${fmt(summary.lastTenthMb)} MB, max ${fmt(summary.maxMb)} MB`,
  );
  mkdirSync(join(root, 'bench/results'), { recursive: true });
  writeFileSync(
    join(root, 'bench/results/soak.json'),
    JSON.stringify({ date: new Date().toISOString(), ...summary, samples }, null, 2),
  );
  const md = [
    '| s | RSS MB |',
    '|---|---|',
    ...samples
      .filter((_, i) => i % Math.max(1, Math.floor(samples.length / 20)) === 0)
      .map((x) => `| ${fmt(x.s, 0)} | ${fmt(x.rssMb)} |`),
  ];
  writeFileSync(
    join(root, 'bench/results/soak.md'),
    `${summary.requests} requests, ${summary.errors} errors, RSS first tenth ${fmt(summary.firstTenthMb)} MB, last tenth ${fmt(summary.lastTenthMb)} MB, max ${fmt(summary.maxMb)} MB\n\n${md.join('\n')}\n`,
  );
  if (summary.errors || summary.lastTenthMb > summary.firstTenthMb * 1.1) process.exitCode = 2;
}

/** The peers to measure (those --targets keeps), installed on first use by bench/install-peers.sh. */
async function startPeers(upstreamUrl, dir) {
  const peers = join(root, 'bench/peers');
  const starters = {
    portkey: async () => {
      const port = freePort();
      const pid = await startPeer(
        process.execPath,
        [
          '--import',
          join(peers, 'loopback.mjs'),
          join(peers, 'node_modules/@portkey-ai/gateway/build/start-server.js'),
          `--port=${port}`,
          '--headless',
        ],
        { NODE_ENV: 'production' },
        `http://127.0.0.1:${port}/`,
      );
      return {
        name: 'portkey',
        urls: [`http://127.0.0.1:${port}`],
        pids: [pid],
        token: 'upstream-key',
        headers: { 'x-portkey-provider': 'openai', 'x-portkey-custom-host': `${upstreamUrl}/v1` },
      };
    },
    litellm: async () => {
      const port = freePort();
      const model = (name) =>
        `  - model_name: ${name}\n    litellm_params:\n      model: openai/${name}\n      api_base: ${upstreamUrl}/v1\n      api_key: upstream-key\n`;
      writeFileSync(
        join(dir, 'litellm.yaml'),
        `model_list:\n${model('bench')}${model('bench-200')}general_settings:\n  master_key: sk-bench-litellm\n`,
      );
      const pid = await startPeer(
        join(peers, 'litellm-venv/bin/litellm'),
        [
          '--config',
          join(dir, 'litellm.yaml'),
          '--host',
          '127.0.0.1',
          '--port',
          String(port),
          '--num_workers',
          '1',
        ],
        { LITELLM_LOG: 'ERROR' },
        `http://127.0.0.1:${port}/health/liveliness`,
      );
      return { name: 'litellm', urls: [`http://127.0.0.1:${port}`], pids: [pid], token: 'sk-bench-litellm' };
    },
    // TensorZero's Rust gateway: the model is named in the request (tensorzero::model_name::<name>); observability
    // off, no database.
    tensorzero: async () => {
      const model = (name) =>
        `[models.${JSON.stringify(name)}]\nrouting = ["standin"]\n[models.${JSON.stringify(name)}.providers.standin]\ntype = "openai"\nmodel_name = "${name}"\napi_base = "${upstreamUrl}/v1/"\napi_key_location = "none"\n`;
      writeFileSync(
        join(dir, 'tensorzero.toml'),
        `[gateway]\nobservability.enabled = false\n\n${model('bench')}${model('bench-200')}`,
      );
      const served = await startCommand(
        join(peers, 'rust-venv/bin/python'),
        [join(peers, 'tensorzero-serve.py'), join(dir, 'tensorzero.toml')],
        { RUST_LOG: 'warn' },
        /"url": "(http:[^"]+)\/v1"/,
      );
      return {
        name: 'tensorzero',
        urls: [served.url],
        pids: [served.pid],
        token: 'none',
        models: { bench: 'tensorzero::model_name::bench', 'bench-200': 'tensorzero::model_name::bench-200' },
      };
    },
    // vllm-router (Rust): a bare load balancer over the one stand-in, no auth or accounting (it polls /health first).
    'vllm-router': async () => {
      const port = freePort();
      const pid = await startPeer(
        join(peers, 'rust-venv/bin/vllm-router'),
        [
          '--host',
          '127.0.0.1',
          '--port',
          String(port),
          '--prometheus-host',
          '127.0.0.1',
          '--prometheus-port',
          String(freePort()),
          '--worker-urls',
          upstreamUrl,
          '--policy',
          'round_robin',
          '--log-level',
          'warning',
        ],
        {},
        `http://127.0.0.1:${port}/health`,
      );
      return {
        name: 'vllm-router (no auth)',
        urls: [`http://127.0.0.1:${port}`],
        pids: [pid],
        token: 'none',
      };
    },
  };
  const wanted = Object.keys(starters).filter((name) => keep(listOption('--targets'), name));
  const install = spawn('bash', [join(root, 'bench/install-peers.sh'), ...wanted], { stdio: 'inherit' });
  if ((await new Promise((r) => install.once('exit', r))) !== 0)
    throw new Error('installing the peers failed');
  const started = [];
  for (const name of wanted) started.push(await starters[name]());
  return started;
}

(args.includes('--soak') ? soak(option('--soak', 100_000)) : main())
  .catch((error) => {
    console.error(error);
    process.exitCode = 1;
  })
  .finally(stopAll);
