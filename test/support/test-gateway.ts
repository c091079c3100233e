import { randomBytes } from 'node:crypto';
import type { Server } from 'node:http';
import Redis from 'ioredis';
import OpenAI from 'openai';
import { startGateway, type Gateway } from '../../src/bootstrap';
import { buildConfig } from '../support/config';
import { WireRecorder } from './wire/wire-recorder';

export const ADMIN_KEY = 'test-admin-key';
export const REDIS_URL = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';

/** Models every e2e test can use; each maps to a stand-in upstream behaviour (see openai-upstream.ts). */
export const TEST_MODELS = [
  'echo',
  'slow',
  'hang',
  'hang-headers',
  'malformed',
  'leak-key',
  'midstream-error',
  'cut',
  'status-400',
  'status-404',
  'status-401',
  'status-429',
  'status-500',
  'status-503',
];

export interface TestGateway {
  gateway: Gateway;
  url: string;
  prefix: string;
  /** Every JSON log line the gateway wrote. */
  logs: Array<Record<string, unknown>>;
  rawLogs: string[];
  redis: Redis;
  /** Every vendor-API answer, checked against the vendor's published schema (test/support/wire/). */
  wire: WireRecorder;
  admin(
    method: string,
    path: string,
    body?: unknown,
    headers?: Record<string, string>,
  ): Promise<{ status: number; body: any; headers: Headers }>;
  /** A request with a team token (for /v1/usage and friends). */
  asTeam(
    token: string,
    method: string,
    path: string,
    body?: unknown,
  ): Promise<{ status: number; body: any; headers: Headers }>;
  /** Creates a team (if needed) and a token for it. */
  teamToken(team: string, models?: string[]): Promise<{ id: string; token: string }>;
  openai(token: string, options?: Partial<ConstructorParameters<typeof OpenAI>[0]>): OpenAI;
  close(): Promise<void>;
}

export interface TestGatewayOptions {
  upstreamUrl: string;
  /** Deep-merged over the default test config. */
  config?: Record<string, any>;
  /** Reuse a prefix (to run two replicas over the same Redis data). */
  prefix?: string;
  /** Environment variables the config's `${NAME}` references read, beside the admin and upstream keys. */
  env?: Record<string, string>;
}

export async function startTestGateway(options: TestGatewayOptions): Promise<TestGateway> {
  const prefix = options.prefix ?? `sy-test:${randomBytes(6).toString('hex')}:`;
  const models = Object.fromEntries(TEST_MODELS.map((m) => [m, { backend: 'standin', upstreamModel: m }]));
  const raw = merge(
    {
      server: {
        port: 0,
        host: '127.0.0.1',
        trustedProxies: ['127.0.0.1/32', '::1/128', '::ffff:127.0.0.1/128'],
        shutdownGraceMs: 2000,
      },
      redis: { url: REDIS_URL, keyPrefix: prefix },
      admin: { apiKey: '${TEST_ADMIN_KEY}' },
      log: { level: 'info' },
      backends: {
        standin: {
          type: 'openai',
          baseUrl: options.upstreamUrl,
          apiKey: '${TEST_UPSTREAM_KEY}',
          timeouts: { firstByteMs: 3000, idleMs: 3000 },
        },
      },
      models,
    },
    options.config ?? {},
  );
  const config = buildConfig(raw, {
    ...options.env,
    TEST_ADMIN_KEY: ADMIN_KEY,
    TEST_UPSTREAM_KEY: 'upstream-secret-key',
  });
  const rawLogs: string[] = [];
  const logs: Array<Record<string, unknown>> = [];
  const gateway = await startGateway(config, {
    logDestination: {
      write(line: string) {
        rawLogs.push(line);
        logs.push(JSON.parse(line) as Record<string, unknown>);
      },
    },
  });
  const redis = new Redis(REDIS_URL);
  const wire = new WireRecorder((backendId) => config.backends[backendId]?.type);
  wire.attach(gateway.app.getHttpServer() as Server);

  const call = async (
    bearer: string,
    method: string,
    path: string,
    body?: unknown,
    headers: Record<string, string> = {},
  ) => {
    const response = await fetch(`${gateway.url}${path}`, {
      method,
      headers: {
        authorization: `Bearer ${bearer}`,
        ...(body ? { 'content-type': 'application/json' } : {}),
        ...headers,
      },
      body: body ? JSON.stringify(body) : undefined,
    });
    const text = await response.text();
    return { status: response.status, body: text ? JSON.parse(text) : undefined, headers: response.headers };
  };
  const admin = (method: string, path: string, body?: unknown, headers?: Record<string, string>) =>
    call(ADMIN_KEY, method, path, body, headers);

  return {
    gateway,
    url: gateway.url,
    prefix,
    logs,
    rawLogs,
    redis,
    wire,
    admin,
    asTeam: (token, method, path, body) => call(token, method, path, body),
    async teamToken(team, teamModels) {
      const created = await admin('POST', '/admin/v1/teams', { id: team, models: teamModels });
      if (created.status !== 201 && created.status !== 409)
        throw new Error(`team create failed: ${JSON.stringify(created)}`);
      const token = await admin('POST', `/admin/v1/teams/${team}/tokens`, { name: 'test' });
      if (token.status !== 201) throw new Error(`token create failed: ${JSON.stringify(token)}`);
      return { id: token.body.id as string, token: token.body.token as string };
    },
    openai(token, clientOptions = {}) {
      return new OpenAI({ apiKey: token, baseURL: `${gateway.url}/v1`, maxRetries: 0, ...clientOptions });
    },
    async close() {
      await gateway.shutdown(500);
      if (!options.prefix) await deletePrefix(redis, prefix);
      await redis.quit();
      // Exchanges that ended after the last test's check (the gateway has answered everything by now).
      await wire.settled();
      wire.detach(expect.getState().testPath ?? '');
      const violations = wire.takeViolations();
      if (violations.length)
        throw new Error(
          `The gateway's answers do not match the vendors' published shapes:\n${violations.join('\n')}`,
        );
    },
  };
}

export async function deletePrefix(redis: Redis, prefix: string): Promise<void> {
  let cursor = '0';
  do {
    const [next, keys] = await redis.scan(cursor, 'MATCH', `${prefix}*`, 'COUNT', 500);
    if (keys.length) await redis.del(...keys);
    cursor = next;
  } while (cursor !== '0');
}

function merge(base: Record<string, any>, over: Record<string, any>): Record<string, any> {
  const out: Record<string, any> = { ...base };
  for (const [key, value] of Object.entries(over)) {
    out[key] =
      value && typeof value === 'object' && !Array.isArray(value) && typeof base[key] === 'object'
        ? merge(base[key], value)
        : value;
  }
  return out;
}
