import { writeFileSync } from 'node:fs';
import autocannon from 'autocannon';
import { request } from 'undici';
import { cpuMs, start, stopAll } from './lib/processes.mjs';
const upstream = await start('/work/main/bench/standin-upstream.mjs', {});
const builds = { base: '/tmp/sc/base/dist/main.js', head: '/work/main/dist/main.js', floor: 'floor' };
const rounds = Number(process.argv[2] ?? 3);
const scen = [['plain', false], ['stream20', true]];
const out = {};
for (let r = 0; r < rounds; r++) for (const [name, main] of (r % 2 ? Object.entries(builds).reverse() : Object.entries(builds))) {
  writeFileSync('/tmp/sc/ab.yaml', `server: { port: 0, host: 127.0.0.1 }
redis: { keyPrefix: "sy-ab:${Date.now()}:" }
admin: { apiKey: a }
backends:
  standin: { type: openai, baseUrl: "${upstream.url}/v1", apiKey: upstream-key, maxConnections: 256 }
models:
  bench: { backend: standin, upstreamModel: bench }
teams:
  bench: { models: ["*"], limits: { requestsPerMinute: 100000000, tokensPerDay: 100000000000 } }
`);
  let s, token;
  if (main === 'floor') { token = 't'; s = await start('/work/main/bench/floor-proxy.mjs', { UPSTREAM: upstream.url, TOKEN: token }); }
  else { s = await start([main], { SWITCHYARD_CONFIG: '/tmp/sc/ab.yaml' }, /"url":"(http:[^"]+)"/);
  ({ token } = await (await request(`${s.url}/admin/v1/teams/bench/tokens`, { method: 'POST', headers: { authorization: 'Bearer a' } })).body.json()); }
  for (const [sc, stream] of scen) {
    const o = { url: `${s.url}/v1/chat/completions`, method: 'POST', headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' }, body: JSON.stringify({ model: 'bench', stream, messages: [{ role: 'user', content: 'Say something.' }] }) };
    await autocannon({ ...o, connections: 8, duration: 2 });
    const c0 = cpuMs(s.pid); const res = await autocannon({ ...o, connections: 32, duration: 8 }); const c = cpuMs(s.pid) - c0;
    const k = `${sc} ${name}`; (out[k] ??= []).push(((c / res.requests.total) * 1000).toFixed(0) + `(${res.requests.average}rps,${res.non2xx}err)`);
  }
  s.child.kill('SIGTERM'); await new Promise((res) => s.child.once('exit', res));
}
const med = (xs) => { const v = xs.map((x) => parseInt(x)).sort((a, b) => a - b); return v[Math.floor(v.length / 2)]; };
console.log(out); for (const [k, v] of Object.entries(out)) console.log(k, 'median', med(v)); stopAll(); process.exit(0);
