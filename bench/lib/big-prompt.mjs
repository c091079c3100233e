// The big-prompt scenario of `npm run bench` (issue 13): what a long prompt costs the gateway, and what it costs
// everyone else's requests while it passes. The baseline is measured in the same run, in this process: a bare
// parse and serialise of the same body, bytes in and bytes out (UTF-8 decode, JSON.parse, JSON.stringify, UTF-8
// encode), the least any JSON gateway must spend on it; the same without the decode and encode (strings only) is
// printed beside it.
import { request } from 'undici';
import { cpuMs, pct } from './processes.mjs';

const SENTENCE = 'The quick brown fox jumps over the lazy dog near the riverbank today. '; // ~14 o200k tokens
const SIZES = [
  // Enough requests each that /proc's 10 ms CPU clock ticks are at most 0.05 ms a request, and one collection
  // of the old generation (a few ms) does not swing the row.
  { name: '~1k tokens', sentences: 72, requests: 300 },
  { name: '~16k tokens', sentences: 1150, requests: 200 },
  { name: '~100k tokens', sentences: 7150, requests: 200 },
];
const bodyOf = (sentences) =>
  JSON.stringify({ model: 'bench', messages: [{ role: 'user', content: SENTENCE.repeat(sentences) }] });
// Sent as bytes encoded once: the load generator shares the two cores with the gateway, and encoding half a
// megabyte per request was its own CPU, not the gateway's.
const bytesOf = (sentences) => Buffer.from(bodyOf(sentences));

/** CPU ms per call of `work` in this process (median of 5 rounds of 20). */
function cpuMsPerCall(work, rounds = 5, iterations = 20) {
  const samples = [];
  for (let r = 0; r < rounds; r++) {
    const before = process.cpuUsage();
    for (let i = 0; i < iterations; i++) work();
    const used = process.cpuUsage(before);
    samples.push((used.user + used.system) / 1000 / iterations);
  }
  return pct(samples, 50);
}
// What a JSON gateway must do with a body at the least: bytes in, a parsed value, bytes out.
const bareBytesCpuMs = (bytes) =>
  cpuMsPerCall(() => Buffer.from(JSON.stringify(JSON.parse(bytes.toString('utf8')))));
const bareStringsCpuMs = (text) => cpuMsPerCall(() => JSON.stringify(JSON.parse(text)));

async function post(url, token, body) {
  const started = performance.now();
  const res = await request(`${url}/v1/chat/completions`, {
    method: 'POST',
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
    body,
  });
  await res.body.dump();
  if (res.statusCode !== 200) throw new Error(`big-prompt: HTTP ${res.statusCode}`);
  return performance.now() - started;
}

/** Small requests on `connections` closed loops for `seconds`: their latencies. */
async function smallLoad(url, token, seconds, connections = 4) {
  const body = bytesOf(1);
  const deadline = Date.now() + seconds * 1000;
  const latencies = [];
  await Promise.all(
    Array.from({ length: connections }, async () => {
      while (Date.now() < deadline) latencies.push(await post(url, token, body));
    }),
  );
  return latencies;
}

const CONTENTION_ROUNDS = 3;

export async function bigPrompt({ url, token, pid }, seconds) {
  const rows = [];
  await smallLoad(url, token, Math.min(5, seconds)); // unmeasured: let V8 optimise the request path first
  for (const size of SIZES) {
    const body = bodyOf(size.sentences);
    const bytes = Buffer.from(body);
    for (let i = 0; i < 10; i++) await post(url, token, bytes); // warm
    const latencies = [];
    const before = cpuMs(pid);
    for (let i = 0; i < size.requests; i++) latencies.push(await post(url, token, bytes));
    const gatewayCpu = (cpuMs(pid) - before) / size.requests;
    const bare = bareBytesCpuMs(bytes);
    const strings = bareStringsCpuMs(body);
    rows.push({
      prompt: size.name,
      bodyKb: Math.round(body.length / 1024),
      gatewayCpuMs: gatewayCpu,
      bareJsonCpuMs: bare,
      ratio: gatewayCpu / bare,
      bareStringsCpuMs: strings,
      stringsRatio: gatewayCpu / strings,
      latencyP50Ms: pct(latencies, 50),
    });
  }
  // What the size itself costs: each row's CPU above the ~1k-token row's (the per-request work every call pays).
  for (const row of rows) row.marginalRatio = (row.gatewayCpuMs - rows[0].gatewayCpuMs) / row.bareJsonCpuMs;
  // Alone and with big prompts in turn, three times, each phase's latencies pooled: the machine's drift over the
  // scenario (other processes, CPU frequency) then weighs on both phases alike.
  const big = bytesOf(SIZES[2].sentences);
  const alone = [];
  const during = [];
  let bigSent = 0;
  for (let round = 0; round < CONTENTION_ROUNDS; round++) {
    for (const ms of await smallLoad(url, token, seconds)) alone.push(ms);
    let running = true;
    const bigLoop = (async () => {
      while (running) {
        await post(url, token, big);
        bigSent++;
      }
    })();
    for (const ms of await smallLoad(url, token, seconds)) during.push(ms);
    running = false;
    await bigLoop;
  }
  const contention = {
    smallP99AloneMs: pct(alone, 99),
    smallP99WithBigMs: pct(during, 99),
    ratio: pct(during, 99) / pct(alone, 99),
    bigPromptsSent: bigSent,
    rounds: CONTENTION_ROUNDS,
    secondsPerPhase: seconds,
  };
  return { rows, contention };
}
