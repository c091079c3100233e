// Switchyard as the single-target benchmarks run it (profile, layers, ab): a production-like config (auth, a team
// with request and token limits, usage accounting in Redis, metrics, access log) in front of the stand-in, and a
// token of that team.
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { request } from 'undici';
import { startCommand } from './processes.mjs';

/**
 * The V8 flags the gateway is started with in production (package.json `start`, the Dockerfile's CMD, the k8s
 * Deployment's args; test/unit/container-files.spec.ts keeps them equal), so the benchmarks measure what runs:
 * the young generation capped at 2 x 16 MB (docs/performance.md, memory under load).
 */
export const PRODUCTION_NODE_ARGS = ['--max-semi-space-size=16'];

/**
 * Starts `main` (a build's dist/main.js) under `node` (default: the Node running the bench) with the production flags
 * (`productionArgs`, default PRODUCTION_NODE_ARGS) and `nodeArgs` after them (e.g. --cpu-prof; a later V8 flag wins),
 * its config written to `dir`;
 * resolves with the process (pid, url, child) and `token`. `upstreamModel` picks the stand-in's answer for model
 * `bench` (bench-200: 200-chunk streams); model `bench-200` always streams 200 chunks. `extraConfig`: YAML lines added
 * at the end of the config (e.g. a `telemetry:` section).
 */
export async function startBenchSwitchyard({
  main,
  upstreamUrl,
  dir,
  upstreamModel = 'bench',
  nodeArgs = [],
  productionArgs = PRODUCTION_NODE_ARGS,
  maxConnections = 256,
  node = process.execPath,
  extraConfig = '',
}) {
  const config = join(dir, `switchyard-${Date.now()}.yaml`);
  writeFileSync(
    config,
    `server: { port: 0, host: 127.0.0.1 }
redis: { keyPrefix: "sy-bench:${Date.now()}:" }
admin: { apiKey: bench-admin }
backends:
  standin: { type: openai, baseUrl: "${upstreamUrl}/v1", apiKey: upstream-key, maxConnections: ${maxConnections} }
models:
  bench: { backend: standin, upstreamModel: ${upstreamModel} }
  bench-200: { backend: standin, upstreamModel: bench-200 }
teams:
  bench: { models: ["*"], limits: { requestsPerMinute: 100000000, tokensPerDay: 100000000000 } }
${extraConfig}`,
  );
  const server = await startCommand(
    node,
    [...productionArgs, ...nodeArgs, main],
    { SWITCHYARD_CONFIG: config },
    /"url":"(http:[^"]+)"/,
  );
  const issued = await request(`${server.url}/admin/v1/teams/bench/tokens`, {
    method: 'POST',
    headers: { authorization: 'Bearer bench-admin' },
  });
  return { ...server, token: (await issued.body.json()).token };
}
