import { ConfigError, interpolateEnv } from '../../src/config/config.loader';
import { buildConfig, loadConfig } from '../support/config';
import { FAMILIES } from '../../src/providers/families';

/** The registry's types, in its order (a new family is one line there, not an edit here). */
const KNOWN_TYPES = FAMILIES.map((family) => family.type).join(', ');
/** The registry's families that serve embeddings, as the loader lists them ("a, b and c"). */
const EMBEDDING_TYPES = FAMILIES.filter((family) => family.embeddings)
  .map((family) => family.type)
  .join(', ')
  .replace(/, (?=[^,]*$)/, ' and ');

const minimal = { admin: { apiKey: 'k' } };

describe('config loader', () => {
  it('fills defaults for everything optional', () => {
    const config = buildConfig(minimal, {});
    expect(config.server).toMatchObject({
      port: 8080,
      maxBodyBytes: 20971520,
      trustedProxies: ['127.0.0.1/32', '::1/128'],
    });
    expect(config.redis).toMatchObject({ url: 'redis://127.0.0.1:6379', keyPrefix: 'sy:' });
  });

  it('server.publicUrl is an origin (kept without its trailing slash); a path, query or credentials are refused', () => {
    expect(
      buildConfig({ ...minimal, server: { publicUrl: 'https://gw.example.com/' } }, {}).server.publicUrl,
    ).toBe('https://gw.example.com');
    for (const bad of [
      'https://gw.example.com/base',
      'https://gw.example.com/?a=1',
      'https://u:p@gw.example.com',
    ])
      expect(() => buildConfig({ ...minimal, server: { publicUrl: bad } }, {})).toThrow(
        'server.publicUrl: must be an origin only',
      );
    expect(() => buildConfig({ ...minimal, server: { publicUrl: 'gw.example.com' } }, {})).toThrow(
      /server\.publicUrl/,
    );
  });

  it('interpolates ${VAR} and ${VAR:-default} after parsing, and names the key of a missing variable', () => {
    const problems: string[] = [];
    const out = interpolateEnv(
      { a: { b: 'x-${SET}-y', c: ['${UNSET:-fallback}'], d: '${GONE}' } },
      { SET: 'v' },
      '',
      problems,
    );
    expect(out).toEqual({ a: { b: 'x-v-y', c: ['fallback'], d: '' } });
    expect(problems).toEqual(['a.d: environment variable GONE is not set']);
  });

  it('the default config takes its Redis key prefix from SWITCHYARD_REDIS_PREFIX (sy: when unset)', () => {
    const env = { SWITCHYARD_ADMIN_KEY: 'k', SWITCHYARD_CONFIG: 'config/switchyard.yaml' };
    expect(loadConfig(env).redis.keyPrefix).toBe('sy:');
    expect(loadConfig({ ...env, SWITCHYARD_REDIS_PREFIX: 'staging:' }).redis.keyPrefix).toBe('staging:');
  });

  it('lets PORT override server.port and rejects a PORT that is not a port', () => {
    expect(buildConfig(minimal, { PORT: '9090' }).server.port).toBe(9090);
    expect(() => buildConfig(minimal, { PORT: 'abc' })).toThrow(/PORT: "abc" is not a port number/);
  });

  it('reads a PORT set but empty as unset (server.port applies), never as port 0', () => {
    const configured = { ...minimal, server: { port: 9191 } };
    expect(buildConfig(configured, { PORT: '' }).server.port).toBe(9191);
    expect(buildConfig(configured, { PORT: '  ' }).server.port).toBe(9191);
    expect(buildConfig(minimal, { PORT: '' }).server.port).toBe(8080);
    // Number() reads these as ports; they are not written as one.
    for (const odd of ['0x50', '1e3', '80.0', '-0', '+80'])
      expect(() => buildConfig(minimal, { PORT: odd })).toThrow(`PORT: "${odd}" is not a port number`);
  });

  it('reports every problem at once, each with its full key path', () => {
    let error: ConfigError | undefined;
    try {
      buildConfig(
        {
          server: { maxBodyBytes: 10, extra: 1 },
          admin: {},
          backends: { b1: { type: 'openai', baseUrl: 'http://x.local/v1', timeouts: { idleMs: 0 } } },
          models: { m1: { backend: 'b2', upstreamModel: 'u' }, m2: { backend: 'b1' } },
        },
        {},
      );
    } catch (e) {
      error = e as ConfigError;
    }
    expect(error).toBeInstanceOf(ConfigError);
    const text = error!.message;
    expect(text).toMatch(/server\.maxBodyBytes: must not be less than 1024/);
    expect(text).toMatch(/server\.extra: property extra should not exist/);
    expect(text).toMatch(/admin\.apiKey: must be set/);
    expect(text).toMatch(/backends\.b1\.timeouts\.idleMs: must not be less than 1/);
    expect(text).toMatch(/models\.m1\.backend: unknown backend "b2" \(known: b1\)/);
    expect(text).toMatch(/models\.m2\.upstreamModel/);
  });

  it('the shipped config/switchyard.yaml is valid', () => {
    const config = loadConfig({ SWITCHYARD_CONFIG: 'config/switchyard.yaml', SWITCHYARD_ADMIN_KEY: 'x' });
    expect(Object.keys(config.models).length).toBeGreaterThan(0);
  });

  it('refuses a thinking mode that does not fit the backend type, naming the key', () => {
    expect(() =>
      buildConfig(
        {
          admin: { apiKey: 'k' },
          backends: {
            o: { type: 'openai', baseUrl: 'http://x/v1' },
            a: { type: 'anthropic', baseUrl: 'http://y/v1' },
          },
          models: {
            m1: { backend: 'o', upstreamModel: 'x', thinking: 'native' },
            m2: { backend: 'a', upstreamModel: 'y', thinking: 'reasoning_effort' },
            m3: { backend: 'a', upstreamModel: 'z', thinking: 'native' },
          },
        },
        {},
      ),
    ).toThrow(
      /models\.m1\.thinking: "native" does not apply to openai backends[\s\S]*models\.m2\.thinking: "reasoning_effort" does not apply to anthropic backends \(use none or native\)/,
    );
  });
});

describe('config errors a newcomer makes', () => {
  const problemsOf = (raw: unknown): string[] => {
    try {
      buildConfig(raw, {});
    } catch (error) {
      expect(error).toBeInstanceOf(ConfigError);
      return (error as ConfigError).message
        .split('\n')
        .slice(1)
        .map((line) => line.replace(/^\s+- /, ''));
    }
    throw new Error('the config was accepted');
  };

  it('a port that is not a number: one line naming the key and the value, not three contradicting ones', () => {
    expect(problemsOf({ admin: { apiKey: 'k' }, server: { port: 'eighty' } })).toEqual([
      'server.port: must be an integer number (got "eighty")',
    ]);
    // A number out of range still says which bound it broke.
    expect(problemsOf({ admin: { apiKey: 'k' }, server: { port: 70000 } })).toEqual([
      'server.port: must not be greater than 65535',
    ]);
  });

  it('a wrong kind of value never echoes a key that may hold a secret', () => {
    expect(problemsOf({ admin: { apiKey: 12345 } })).toEqual(['admin.apiKey: must be a string']);
  });

  it('a backend type with a typo names the key and the known types, even with a model using that backend', () => {
    const problems = problemsOf({
      admin: { apiKey: 'k' },
      backends: { main: { type: 'openia', baseUrl: 'http://x/v1' } },
      models: {
        m: { backend: 'main', upstreamModel: 'gpt-4o' },
        n: { deployments: [{ backend: 'main', upstreamModel: 'x' }] },
      },
    });
    expect(KNOWN_TYPES).toMatch(/^openai, anthropic, gemini, local\b/);
    expect(problems).toEqual([
      `backends.main.type: unknown backend type "openia" (known types: ${KNOWN_TYPES})`,
    ]);
    expect(
      problemsOf({
        admin: { apiKey: 'k' },
        backends: { main: { baseUrl: 'http://x/v1' } },
        models: { m: { backend: 'main', upstreamModel: 'x' } },
      }),
    ).toEqual([`backends.main.type: must be set (known types: ${KNOWN_TYPES})`]);
  });

  it("validates each backend with its family's own config class: its keys there, not on another family's backend", () => {
    const config = buildConfig({
      admin: { apiKey: 'k' },
      backends: {
        o: { type: 'openai', baseUrl: 'http://x/v1', responsesApi: true },
        a: { type: 'anthropic', baseUrl: 'http://y/v1', anthropicVersion: '2024-01-01' },
        l: { type: 'local', local: { parallel: 3 } },
      },
    });
    expect(config.backends.o).toMatchObject({ responsesApi: true, maxConnections: 1024 });
    expect(config.backends.a).toMatchObject({ anthropicVersion: '2024-01-01' });
    // A local backend is not reached over HTTP: no baseUrl needed; its own settings get their defaults.
    expect(config.backends.l).toMatchObject({ local: { parallel: 3, queueSize: 16 } });
    expect(
      problemsOf({
        admin: { apiKey: 'k' },
        backends: {
          a: { type: 'anthropic', baseUrl: 'http://y/v1', responsesApi: true },
          g: { type: 'gemini' },
          l: { type: 'local', local: { parallel: 0 } },
        },
      }),
    ).toEqual([
      'backends.a.responsesApi: property responsesApi should not exist',
      'backends.g.baseUrl: must be a URL address',
      'backends.l.local.parallel: must not be less than 1',
    ]);
  });

  it("a family's own rule on its models (a local backend runs a chat or an embedding model) names the key", () => {
    expect(
      problemsOf({
        admin: { apiKey: 'k' },
        backends: {
          l: { type: 'local', local: { embedding: true } },
          a: { type: 'anthropic', baseUrl: 'http://y/v1' },
        },
        models: {
          chat: { backend: 'l', upstreamModel: 'x' },
          e: { backend: 'a', upstreamModel: 'x', kind: 'embedding' },
        },
      }),
    ).toEqual([
      'models.chat.kind: backend "l" runs an embedding model (local.embedding: true); set kind: embedding',
      `models.e.kind: anthropic backends do not serve embeddings (${EMBEDDING_TYPES} ones do)`,
    ]);
  });

  it("a family's objection to a deployment's model id names that id's key, not kind", () => {
    const vertex = { type: 'vertex', project: 'p', region: 'us-east5', baseUrl: 'http://127.0.0.1:9' };
    expect(
      problemsOf({
        admin: { apiKey: 'k' },
        backends: { v: vertex },
        models: {
          odd: { backend: 'v', upstreamModel: 'meta/llama-3' },
          embed: { backend: 'v', upstreamModel: 'anthropic/claude-echo', kind: 'embedding' },
          listed: {
            deployments: [
              { backend: 'v', upstreamModel: 'gemini-2.5-pro' },
              { backend: 'v', upstreamModel: 'google/' },
            ],
          },
        },
      }),
    ).toEqual([
      'models.odd.upstreamModel: "meta/llama-3" is not a Vertex model id ("<id>", "google/<id>" or "anthropic/<id>")',
      `models.embed.upstreamModel: "anthropic/claude-echo" is a Claude model; Vertex embeddings are Google's text embedding models`,
      'models.listed.deployments[1].upstreamModel: "google/" is not a Vertex model id ("<id>", "google/<id>" or "anthropic/<id>")',
    ]);
  });

  it('a vertex backend given an apiKey is refused with a line that says what it signs in with', () => {
    expect(
      problemsOf({
        admin: { apiKey: 'k' },
        backends: { v: { type: 'vertex', project: 'p', region: 'us-east5', apiKey: 'AIza-not-used' } },
      }),
    ).toEqual([
      'backends.v.apiKey: vertex backends take no apiKey: they sign in with Google credentials (credentialsFile, ' +
        'GOOGLE_APPLICATION_CREDENTIALS or Application Default Credentials); remove it',
    ]);
  });

  it('refuses a limit above Number.MAX_SAFE_INTEGER (a budget above what nano-units can hold), naming the key', () => {
    const seeded = (limits: Record<string, number>) => ({ ...minimal, teams: { t1: { limits } } });
    expect(
      problemsOf(seeded({ tokensPerDay: Number.MAX_SAFE_INTEGER + 1, requestsPerMinute: 1e300 })),
    ).toEqual([
      `teams.t1.limits.requestsPerMinute: must not be greater than ${Number.MAX_SAFE_INTEGER}`,
      `teams.t1.limits.tokensPerDay: must not be greater than ${Number.MAX_SAFE_INTEGER}`,
    ]);
    expect(problemsOf(seeded({ budgetPerMonth: 1e10 }))).toEqual([
      'teams.t1.limits.budgetPerMonth: must not be greater than 9007199.25474',
    ]);
    expect(buildConfig(seeded({ tokensPerDay: Number.MAX_SAFE_INTEGER }), {}).teams.t1.limits).toEqual({
      tokensPerDay: Number.MAX_SAFE_INTEGER,
    });
  });
});
