#!/usr/bin/env node
// Where the bytes of a held stream go: heap snapshots of a fresh Switchyard holding N streams and N/2 streams,
// grouped by what the objects are (constructor, closure, string kind, V8-internal kind), and the difference
// divided by the N/2 streams that separate them: the live heap one more held stream costs, by kind.
//   node bench/held-heap.mjs [--streams N] [--top K] [--prompt-kb P] [--main <a build's dist/main.js>]
//   (after npm run build; needs Redis)
// Each snapshot is taken (V8 collects fully first, so only live objects count) once every stream has had its
// first bytes, with the streams long enough (60 one-a-second chunks) to still be flowing when the snapshot ends.
// With --prompt-kb, each request carries an agent's conversation of about P KB (bench/lib/conversation.mjs) instead of
// one short line: what a held stream keeps of its request. HELD_NODE_ARGS adds flags to the gateway's node (as
// bench/held-streams.mjs). Prints markdown tables.
import { mkdtempSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { Agent, request } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { rssMb, start, stopAll } from './lib/processes.mjs';
import { conversation } from './lib/conversation.mjs';
import { startBenchSwitchyard } from './lib/switchyard.mjs';

const root = join(import.meta.dirname, '..');
const args = process.argv.slice(2);
const option = (name, fallback) => (args.includes(name) ? Number(args[args.indexOf(name) + 1]) : fallback);
const streams = option('--streams', 2000);
const top = option('--top', 25);
const promptKb = option('--prompt-kb', 0);
const main = args.includes('--main') ? args[args.indexOf('--main') + 1] : join(root, 'dist/main.js');
const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

/** Holds `count` streams through a fresh gateway and returns its heap snapshot, grouped by kind. */
async function snapshotHolding(count) {
  const dir = mkdtempSync(join(tmpdir(), 'switchyard-heap-'));
  const upstream = await start(join(root, 'bench/standin-upstream.mjs'), { CHUNKS: '60', GAP_MS: '1000' });
  const gateway = await startBenchSwitchyard({
    main,
    upstreamUrl: upstream.url,
    dir,
    maxConnections: count + 64,
    nodeArgs: [
      ...(process.env.HELD_NODE_ARGS ? process.env.HELD_NODE_ARGS.split(' ') : []),
      '--heapsnapshot-signal=SIGUSR2',
      `--diagnostic-dir=${dir}`,
    ],
  });
  const { hostname, port } = new URL(gateway.url);
  const agent = new Agent({ keepAlive: false, maxSockets: Infinity });
  const body = JSON.stringify({ model: 'bench', stream: true, messages: conversation(promptKb) });
  let flowing = 0;
  const requests = [];
  const open = () =>
    new Promise((resolve) => {
      const req = request(
        {
          host: hostname,
          port,
          path: '/v1/chat/completions',
          method: 'POST',
          agent,
          headers: { authorization: `Bearer ${gateway.token}`, 'content-type': 'application/json' },
        },
        (res) => {
          res.once('data', () => flowing++);
          res.on('data', () => {});
          res.on('end', resolve);
          res.on('error', resolve);
        },
      );
      req.on('error', resolve);
      requests.push(req);
      req.end(body);
    });
  for (let i = 0; i < count; i += 200) {
    for (let j = i; j < Math.min(count, i + 200); j++) void open();
    await sleep(100);
  }
  while (flowing < count) await sleep(100);
  await sleep(2000); // every stream past its first chunks: the steady state, not the opening
  const memory = await memoryOf(gateway);
  process.kill(gateway.pid, 'SIGUSR2');
  const file = await finishedSnapshot(dir);
  console.error(`snapshot holding ${count}: ${file}`);
  const snapshot = JSON.parse(readFileSync(file, 'utf8'));
  const groups = groupSnapshot(snapshot);
  const owners = groupByOwner(snapshot);
  for (const req of requests) req.destroy();
  gateway.child.kill('SIGTERM');
  upstream.child.kill('SIGTERM');
  await new Promise((resolve) => gateway.child.once('exit', resolve));
  return { groups, owners, memory };
}

/** RSS and V8's heap as the gateway's /metrics report them (bytes), before the snapshot's full collection. */
async function memoryOf(gateway) {
  const text = await (await fetch(`${gateway.url}/metrics`)).text();
  const metric = (name) => Number(new RegExp(`^${name} (\\S+)`, 'm').exec(text)?.[1] ?? NaN);
  const space = (name) =>
    Number(
      new RegExp(`^nodejs_heap_space_size_total_bytes\\{space="${name}"\\} (\\S+)`, 'm').exec(text)?.[1],
    );
  return {
    rss: rssMb(gateway.pid) * 1048576,
    heapTotal: metric('nodejs_heap_size_total_bytes'),
    heapUsed: metric('nodejs_heap_size_used_bytes'),
    newSpace: space('new'),
    oldSpace: space('old'),
    external: metric('nodejs_external_memory_bytes'),
  };
}

/** The snapshot's path once V8 has written all of it (its size stops changing and it ends its JSON). */
async function finishedSnapshot(dir) {
  let last = -1;
  for (;;) {
    await sleep(1000);
    const name = readdirSync(dir).find((f) => f.endsWith('.heapsnapshot'));
    if (!name) continue;
    const size = statSync(join(dir, name)).size;
    if (size === last && size > 0) return join(dir, name);
    last = size;
  }
}

/** Self sizes and counts by kind: objects by constructor, closures by function name, strings by representation. */
function groupSnapshot(snapshot) {
  const { node_fields: fields, node_types: types } = snapshot.snapshot.meta;
  const stride = fields.length;
  const at = (name) => fields.indexOf(name);
  const [typeAt, nameAt, sizeAt] = [at('type'), at('name'), at('self_size')];
  const typeNames = types[typeAt];
  const { nodes, strings } = snapshot;
  const groups = new Map();
  for (let i = 0; i < nodes.length; i += stride) {
    const type = typeNames[nodes[i + typeAt]];
    const name = strings[nodes[i + nameAt]];
    let key;
    if (type === 'object') key = name;
    else if (type === 'closure') key = `closure ${name || '(anonymous)'}`;
    else if (type === 'string' || type === 'concatenated string' || type === 'sliced string')
      key = `(${type})`;
    else if (type === 'hidden' || type === 'native' || type === 'array' || type === 'object shape')
      key = `(${type}) ${name.replace(/\d+/g, 'N').slice(0, 60)}`;
    else key = `(${type})`;
    const group = groups.get(key) ?? { count: 0, bytes: 0 };
    group.count++;
    group.bytes += nodes[i + sizeAt];
    groups.set(key, group);
  }
  return groups;
}

/**
 * What owns the bytes: every live object is charged to the nearest "owner" on its shortest retainer path from V8's
 * roots (itself if it is one): the per-connection and per-request objects of Node, Express and undici, the
 * gateway's own request state, and the async frames (a suspended async function or generator, by its function's
 * name) that wait for the stream's life. Returns Map<owner, Map<kind, {count, bytes}>> and a sample path per owner.
 */
function groupByOwner(snapshot) {
  const {
    node_fields: fields,
    node_types: types,
    edge_fields: edgeFields,
    edge_types: edgeTypes,
  } = snapshot.snapshot.meta;
  const stride = fields.length;
  const edgeStride = edgeFields.length;
  const [typeAt, nameAt, sizeAt, edgeCountAt] = ['type', 'name', 'self_size', 'edge_count'].map((f) =>
    fields.indexOf(f),
  );
  const [edgeTypeAt, edgeNameAt, toAt] = ['type', 'name_or_index', 'to_node'].map((f) =>
    edgeFields.indexOf(f),
  );
  const typeNames = types[typeAt];
  const edgeTypeNames = edgeTypes[edgeTypeAt];
  const weak = edgeTypeNames.indexOf('weak');
  const shortcut = edgeTypeNames.indexOf('shortcut');
  const { nodes, edges, strings } = snapshot;
  const count = nodes.length / stride;
  const firstEdge = new Uint32Array(count + 1);
  for (let n = 0, e = 0; n < count; n++) {
    firstEdge[n] = e;
    e += nodes[n * stride + edgeCountAt] * edgeStride;
    firstEdge[n + 1] = e;
  }
  // Breadth first from the root: each node's parent on a shortest path (weak and shortcut edges do not retain).
  const parent = new Int32Array(count).fill(-1);
  const parentEdge = new Int32Array(count).fill(-1);
  parent[0] = 0;
  const queue = new Uint32Array(count);
  let head = 0;
  let tail = 0;
  queue[tail++] = 0;
  while (head < tail) {
    const n = queue[head++];
    for (let e = firstEdge[n]; e < firstEdge[n + 1]; e += edgeStride) {
      const kind = edges[e + edgeTypeAt];
      if (kind === weak || kind === shortcut) continue;
      const to = edges[e + toAt] / stride;
      if (parent[to] !== -1) continue;
      parent[to] = n;
      parentEdge[to] = e;
      queue[tail++] = to;
    }
  }
  const name = (n) => strings[nodes[n * stride + nameAt]];
  const type = (n) => typeNames[nodes[n * stride + typeAt]];
  const ownerName = (n) => {
    const t = type(n);
    const label = name(n);
    if (t === 'object' && OWNERS.has(label)) return label;
    if (t === 'closure' && label.startsWith('bound ')) return undefined;
    return undefined;
  };
  const owner = new Int32Array(count).fill(-2); // -2: not yet known, -1: none
  const ownerOf = (n) => {
    const chain = [];
    let at = n;
    while (owner[at] === -2) {
      if (ownerName(at) !== undefined) {
        owner[at] = at;
        break;
      }
      if (at === 0 || parent[at] === -1) {
        owner[at] = -1;
        break;
      }
      chain.push(at);
      at = parent[at];
    }
    for (const c of chain) owner[c] = owner[at];
    return owner[n];
  };
  const kindOf = (n) => {
    const t = type(n);
    if (t === 'object') return name(n);
    if (t === 'closure') return `closure ${name(n) || '(anonymous)'}`;
    if (t === 'string' || t === 'concatenated string' || t === 'sliced string') return `(${t})`;
    return `(${t}) ${name(n).replace(/\d+/g, 'N').slice(0, 50)}`;
  };
  const groups = new Map();
  const samples = new Map();
  for (let n = 0; n < count; n++) {
    if (parent[n] === -1) continue; // unreachable: not live
    const o = ownerOf(n);
    const key = o < 0 ? '(no owner: shared, or reached first from a global)' : ownerName(o);
    let byKind = groups.get(key);
    if (!byKind) groups.set(key, (byKind = new Map()));
    const kind = kindOf(n);
    const group = byKind.get(kind) ?? { count: 0, bytes: 0 };
    group.count++;
    group.bytes += nodes[n * stride + sizeAt];
    byKind.set(kind, group);
    if (o >= 0 && o === n && !samples.has(key)) {
      const path = [];
      for (let at = n; at !== 0 && path.length < 12; at = parent[at]) {
        const e = parentEdge[at];
        const edgeName =
          edges[e + edgeTypeAt] === edgeTypeNames.indexOf('element') ||
          edges[e + edgeTypeAt] === edgeTypeNames.indexOf('hidden')
            ? `[${edges[e + edgeNameAt]}]`
            : `.${strings[edges[e + edgeNameAt]]}`;
        path.push(`${kindOf(at)}${edgeName}`);
      }
      samples.set(key, path.reverse().join(' <- '));
    }
  }
  return { groups, samples };
}

/** The objects bytes are charged to (OWNERS: the nearest one up the retainer path; see groupByOwner). */
const OWNERS = new Set(
  (
    process.env.HELD_OWNERS ??
    'ServerResponse,IncomingMessage,Socket,TCP,HTTPParser,Client,Request,Parser,BodyReadable,RequestHandler,' +
      'Exchange,AbortSignal,AbortController,Timeout,TimersList,Promise,Generator,ReadableState,WritableState'
  ).split(','),
);

try {
  const half = Math.round(streams / 2);
  // --files <half's .heapsnapshot> <full's>: analyses snapshots kept by an earlier run (paths on stderr) instead.
  const files = args.includes('--files')
    ? args.slice(args.indexOf('--files') + 1, args.indexOf('--files') + 3)
    : [];
  const analysed = (file) => {
    const snapshot = JSON.parse(readFileSync(file, 'utf8'));
    return { groups: groupSnapshot(snapshot), owners: groupByOwner(snapshot), memory: {} };
  };
  const {
    groups: small,
    owners: smallOwners,
    memory: smallMemory,
  } = files.length ? analysed(files[0]) : await snapshotHolding(half);
  const {
    groups: large,
    owners: largeOwners,
    memory: largeMemory,
  } = files.length ? analysed(files[1]) : await snapshotHolding(streams);
  console.log('| before the snapshot | holding ' + half + ' | holding ' + streams + ' | per stream |');
  console.log('|---|---|---|---|');
  for (const [key, label] of [
    ['rss', 'RSS'],
    ['heapTotal', "V8's heap, reserved"],
    ['newSpace', '... of which the young generation'],
    ['oldSpace', '... of which the old generation'],
    ['heapUsed', "V8's heap, in use (live and garbage)"],
    ['external', 'external (buffers)'],
  ])
    console.log(
      `| ${label} | ${(smallMemory[key] / 1048576).toFixed(1)} MB | ${(largeMemory[key] / 1048576).toFixed(1)} MB | ` +
        `${((largeMemory[key] - smallMemory[key]) / (streams - half) / 1024).toFixed(1)} KB |`,
    );
  const per = (key) => {
    const a = small.get(key) ?? { count: 0, bytes: 0 };
    const b = large.get(key) ?? { count: 0, bytes: 0 };
    return {
      key,
      count: (b.count - a.count) / (streams - half),
      bytes: (b.bytes - a.bytes) / (streams - half),
    };
  };
  const rows = [...new Set([...small.keys(), ...large.keys()])].map(per).sort((x, y) => y.bytes - x.bytes);
  const total = rows.reduce((sum, row) => sum + row.bytes, 0);
  const sum = (groups) => [...groups.values()].reduce((s, g) => s + g.bytes, 0) / 1048576;
  console.log(
    `live heap: ${sum(small).toFixed(1)} MB holding ${half} streams, ${sum(large).toFixed(1)} MB holding ${streams}: ` +
      `${(total / 1024).toFixed(1)} KB a stream`,
  );
  console.log('| kind | per stream: objects | bytes |');
  console.log('|---|---|---|');
  for (const row of rows.slice(0, top))
    console.log(`| ${row.key.replace(/\|/g, '\\|')} | ${row.count.toFixed(1)} | ${row.bytes.toFixed(0)} |`);
  const rest = rows.slice(top).reduce((s, row) => s + row.bytes, 0);
  console.log(`| everything else | | ${rest.toFixed(0)} |`);
  console.log('\nBy owner (each live object charged to the nearest owner up its shortest retainer path):');
  console.log('| owner | bytes per stream | of which, by kind (bytes per stream) |');
  console.log('|---|---|---|');
  const ownerRows = [...new Set([...smallOwners.groups.keys(), ...largeOwners.groups.keys()])].map(
    (owner) => {
      const a = smallOwners.groups.get(owner) ?? new Map();
      const b = largeOwners.groups.get(owner) ?? new Map();
      const kinds = [...new Set([...a.keys(), ...b.keys()])]
        .map((kind) => ({
          kind,
          count: ((b.get(kind)?.count ?? 0) - (a.get(kind)?.count ?? 0)) / (streams - half),
          bytes: ((b.get(kind)?.bytes ?? 0) - (a.get(kind)?.bytes ?? 0)) / (streams - half),
        }))
        .sort((x, y) => y.bytes - x.bytes);
      return { owner, kinds, bytes: kinds.reduce((s, k) => s + k.bytes, 0) };
    },
  );
  ownerRows.sort((x, y) => y.bytes - x.bytes);
  for (const row of ownerRows.filter((r) => Math.abs(r.bytes) >= 16))
    console.log(
      `| ${row.owner} | ${row.bytes.toFixed(0)} | ` +
        row.kinds
          .filter((k) => Math.abs(k.bytes) >= 24)
          .slice(0, 12)
          .map((k) => `${k.kind.replace(/\|/g, '\\|')} ${k.count.toFixed(1)}×: ${k.bytes.toFixed(0)}`)
          .join('; ') +
        ' |',
    );
  if (args.includes('--paths'))
    for (const [owner, path] of largeOwners.samples) console.log(`- ${owner}: ${path}`);
} finally {
  stopAll();
}
