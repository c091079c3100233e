#!/usr/bin/env node
// What one request's spans cost by themselves, away from the rest of the gateway (whose CPU per request drifts with
// this machine's load far more than a span costs): the build's own Tracing (dist/telemetry) makes a chat request's
// server span and its call's span, as the usage recorder and the pipeline do, 50 requests per event-loop turn,
// exported over OTLP protobuf to a receiver in this process (its reading is counted too); CPU per request and bytes
// exported, for sampleRatio 1, 0.1 and 0. Complements bench/tracing.mjs (docs/performance.md, tracing).
//   node bench/tracing-spans.mjs   (after npm run build)
import { createServer } from 'node:http';
import { createRequire } from 'node:module';
import { join } from 'node:path';

const require = createRequire(import.meta.url);
const dist = join(import.meta.dirname, '../dist');
const { Tracing } = require(join(dist, 'telemetry/tracing.js'));
const { Exchange } = require(join(dist, 'gateway/exchange.js'));
const { Redactor } = require(join(dist, 'request-log/redaction/redactor.js'));

const REQUESTS = 20_000;
const PER_TURN = 50;
let bytes = 0;
const sink = createServer((req, res) => {
  req.on('data', (chunk) => (bytes += chunk.length));
  req.on('end', () => res.writeHead(200, { 'content-type': 'application/x-protobuf' }).end());
});
await new Promise((resolve) => sink.listen(0, '127.0.0.1', resolve));
const endpoint = `http://127.0.0.1:${sink.address().port}`;
const logger = { pino: { info() {}, warn() {} } };
const deployment = {
  id: 'standin/bench',
  upstreamModel: 'bench',
  backend: { id: 'standin', adapter: { family: 'openai' } },
};
const chat = { model: 'bench', messages: [{ role: 'user', content: 'Say something.' }], stream: false };

for (const sampleRatio of [1, 0.1, 0]) {
  const tracing = await Tracing.fromConfig(
    {
      telemetry: {
        otlp: { endpoint, protocol: 'http/protobuf', headers: {}, sampleRatio, exportDelayMs: 200 },
      },
      backends: { standin: { baseUrl: 'http://127.0.0.1:1/v1' } },
    },
    new Redactor(),
    logger,
  );
  const request = () => {
    const exchange = new Exchange('r');
    exchange.authenticated({ tokenId: 't', teamId: 'bench', keepsContent: false });
    const req = {
      method: 'POST',
      originalUrl: '/v1/chat/completions',
      headers: { 'user-agent': 'bench', 'content-type': 'application/json' },
      protocol: 'http',
      ip: '127.0.0.1',
      exchange,
    };
    const trace = tracing.start(req);
    exchange.traced(trace);
    const call = { path: '/chat/completions', headers: { authorization: 'Bearer k' }, body: '{}' };
    trace.calling(call, { operation: 'chat', deployment, model: 'bench', fallback: false, chat });
    exchange.routed('bench', 'standin', 'bench');
    exchange.answered({ backend: 'standin', upstreamModel: 'bench', servedModel: 'bench', attempts: 1 });
    exchange.callEnded();
    exchange.counted({ prompt: 3, completion: 20, reasoning: 0, estimated: false });
    trace.end(200);
  };
  for (let i = 0; i < 2000; i++) request(); // warm up
  await new Promise((resolve) => setTimeout(resolve, 300));
  bytes = 0;
  const before = process.cpuUsage();
  for (let done = 0; done < REQUESTS; done += PER_TURN) {
    for (let i = 0; i < PER_TURN; i++) request();
    await new Promise((resolve) => setTimeout(resolve, 1));
  }
  await tracing.shutdown(); // the last batch exported
  const used = process.cpuUsage(before);
  console.log(
    `sampleRatio ${sampleRatio}: ${((used.user + used.system) / REQUESTS).toFixed(1)} µs CPU per request, ` +
      `${(bytes / REQUESTS).toFixed(0)} bytes exported per request`,
  );
}
sink.close();
process.exit(0);
