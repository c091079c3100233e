import { randomBytes } from 'node:crypto';
import Redis from 'ioredis';
import { run, waitForListening, writeConfig, type RunningProcess } from './gateway-process';
import { deletePrefix, REDIS_URL } from './test-gateway';

/** The built gateway in a process of its own, with one team and a token for it. */
export interface GatewayProcess {
  gateway: RunningProcess;
  url: string;
  token: string;
  /** Kills the gateway and deletes the run's Redis keys. */
  stop(): Promise<void>;
}

/**
 * For the suites whose gateway needs an environment of its own (a cloud's credential chain read from env vars, as a
 * pod's are): the built gateway (dist/main.js) with `backends` and `models` as given, the team `team` (every model)
 * and a token for it; `env` is the process's whole environment besides PATH and the config.
 */
export async function startGatewayProcess(options: {
  team: string;
  backends: Record<string, unknown>;
  models: Record<string, unknown>;
  env?: Record<string, string>;
}): Promise<GatewayProcess> {
  const prefix = `sy-test:${randomBytes(6).toString('hex')}:`;
  const adminKey = `${options.team}-admin`;
  // YAML is a superset of JSON: the backends and models go in as JSON.
  const config = writeConfig(`
server: { port: 0, host: 127.0.0.1 }
redis: { url: "${REDIS_URL}", keyPrefix: "${prefix}" }
admin: { apiKey: ${adminKey} }
log: { level: info }
backends: ${JSON.stringify(options.backends)}
models: ${JSON.stringify(options.models)}
teams:
  ${options.team}: { models: ["*"] }
`);
  const gateway = run(config, options.env ?? {});
  const stop = async () => {
    gateway.child.kill('SIGKILL');
    const redis = new Redis(REDIS_URL);
    await deletePrefix(redis, prefix);
    await redis.quit();
  };
  try {
    const url = await waitForListening(gateway.output);
    const created = await fetch(`${url}/admin/v1/teams/${options.team}/tokens`, {
      method: 'POST',
      headers: { authorization: `Bearer ${adminKey}` },
    });
    const { token } = (await created.json()) as { token: string };
    return { gateway, url, token, stop };
  } catch (error) {
    await stop();
    throw error;
  }
}
