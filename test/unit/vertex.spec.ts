import { generateKeyPairSync, verify } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { buildConfig } from '../support/config';
import { AccessTokens } from '../../src/providers/vertex/vertex-access-tokens';
import {
  CLOUD_PLATFORM_SCOPE,
  LibraryTokens,
  libraryWords,
  ServiceAccountTokens,
  TokenError,
  tokenSourceFor,
  type AccessToken,
  type TokenFetcher,
} from '../../src/providers/vertex/vertex-credentials';
import { publisherOf, vertexModelPath } from '../../src/providers/vertex/vertex-paths';
import { vertexBetas, vertexMessagesBody } from '../../src/providers/vertex/vertex-anthropic';
import { VertexAdapter } from '../../src/providers/vertex/vertex.adapter';
import { VertexClient } from '../../src/providers/vertex/vertex.client';
import type { VertexBackendConfig } from '../../src/providers/vertex/vertex.config';
import type { ChatRequest } from '../../src/core/chat-request';
import type { ModelConfig } from '../../src/config/config.schema';

const vertexBackend = (extra: object = {}) => ({
  admin: { apiKey: 'k' },
  backends: { v: { type: 'vertex', project: 'my-project', region: 'us-east5', ...extra } },
});

describe('Vertex: config and URLs', () => {
  it("defaults baseUrl to the region's endpoint, and global's has no region in it; a given one is kept", () => {
    const backend = (extra: object) =>
      buildConfig(vertexBackend(extra), {}).backends.v as VertexBackendConfig;
    expect(backend({}).baseUrl).toBe('https://us-east5-aiplatform.googleapis.com');
    expect(backend({ region: 'global' }).baseUrl).toBe('https://aiplatform.googleapis.com');
    expect(backend({ baseUrl: 'http://127.0.0.1:9/private' }).baseUrl).toBe('http://127.0.0.1:9/private');
    expect(backend({}).anthropicBetas).toContain('interleaved-thinking-2025-05-14');
  });

  it('refuses a backend without a project or with a region that is not a location', () => {
    expect(() => buildConfig({ ...vertexBackend({ project: undefined }) }, {})).toThrow(
      /backends\.v\.project/,
    );
    expect(() => buildConfig(vertexBackend({ region: 'us east/1' }), {})).toThrow(
      /backends\.v\.region: must be a Vertex AI location such as us-east5 or global$/,
    );
  });

  it('refuses a model of another publisher, and a Claude model as an embedding model', () => {
    const withModel = (model: object) =>
      buildConfig({ ...vertexBackend(), models: { m: { backend: 'v', ...model } } }, {});
    expect(() => withModel({ upstreamModel: 'meta/llama-4' })).toThrow(
      /"<id>", "google\/<id>" or "anthropic\/<id>"/,
    );
    expect(() => withModel({ upstreamModel: 'claude-sonnet-4-5@20250929', kind: 'embedding' })).toThrow(
      /is a Claude model/,
    );
    expect(withModel({ upstreamModel: 'anthropic/claude-x' }).models.m.upstreamModel).toBe(
      'anthropic/claude-x',
    );
  });

  it("names the publisher by prefix or by the id's claude- start", () => {
    expect(publisherOf('claude-sonnet-4-5@20250929')).toEqual({
      publisher: 'anthropic',
      model: 'claude-sonnet-4-5@20250929',
    });
    expect(publisherOf('gemini-2.5-pro')).toEqual({ publisher: 'google', model: 'gemini-2.5-pro' });
    expect(publisherOf('anthropic/my-tuned')).toEqual({ publisher: 'anthropic', model: 'my-tuned' });
    expect(publisherOf('google/claude-lookalike')).toEqual({
      publisher: 'google',
      model: 'claude-lookalike',
    });
  });

  it("builds the model path with the project, location and publisher; the version's @ stays as it is", () => {
    const config = { project: 'p-1', region: 'global' };
    expect(vertexModelPath(config, 'anthropic', 'claude-opus-4-1@20250805', 'streamRawPredict')).toBe(
      '/v1/projects/p-1/locations/global/publishers/anthropic/models/claude-opus-4-1@20250805:streamRawPredict',
    );
    expect(vertexModelPath(config, 'google', 'a/b', 'predict')).toBe(
      '/v1/projects/p-1/locations/global/publishers/google/models/a%2Fb:predict',
    );
  });

  it("routes each publisher's chat call to its method, and embeddings to :predict", () => {
    const config = buildConfig(vertexBackend(), {}).backends.v as VertexBackendConfig;
    const adapter = new VertexAdapter(
      'v',
      config,
      new AccessTokens({ fetch: () => Promise.reject(new Error()) }),
    );
    const model = { maxTokens: 1000, thinking: 'none' } as unknown as ModelConfig;
    const request = { model: 'x', messages: [{ role: 'user', content: 'hi' }] } as unknown as ChatRequest;
    const base = '/v1/projects/my-project/locations/us-east5/publishers';
    expect(adapter.buildRequest(request, { upstreamModel: 'gemini-2.5-flash', model }, true).path).toBe(
      `${base}/google/models/gemini-2.5-flash:streamGenerateContent?alt=sse`,
    );
    const claude = adapter.buildRequest(
      request,
      { upstreamModel: 'claude-haiku-4-5@20251001', model },
      false,
    );
    expect(claude.path).toBe(`${base}/anthropic/models/claude-haiku-4-5@20251001:rawPredict`);
    expect(JSON.parse(String(claude.body))).toEqual({
      anthropic_version: 'vertex-2023-10-16',
      max_tokens: 1000,
      messages: [{ role: 'user', content: [{ type: 'text', text: 'hi' }] }],
    });
    expect(
      adapter.buildEmbeddingRequest(
        { model: 'e', input: 'a', dimensions: 3 },
        { upstreamModel: 'text-embedding-005', model },
      ).body,
    ).toBe('{"instances":[{"content":"a"}],"parameters":{"outputDimensionality":3}}');
    expect(adapter.speaksNatively('messages', 'claude-x')).toBe(true);
    expect(adapter.speaksNatively('messages', 'gemini-x')).toBe(false);
  });
});

describe('Vertex: native Messages bodies', () => {
  it('drops model and adds anthropic_version, copying every other member byte for byte', () => {
    const client =
      '{ "model" : "claude-x@1",\n "messages":[{"role":"user","content":"h\\u00e9"}], "max_tokens": 5 }';
    const { model, body } = vertexMessagesBody(Buffer.from(client));
    expect(model).toBe('claude-x@1');
    expect(body.toString()).toBe(
      '{"anthropic_version":"vertex-2023-10-16","messages":[{"role":"user","content":"h\\u00e9"}],"max_tokens": 5}',
    );
  });

  it('reads a model key however it is spelled, and rebuilds a body that names a key twice', () => {
    expect(vertexMessagesBody('{"mod\\u0065l":"c","a":1}').model).toBe('c');
    const twice = vertexMessagesBody('{"model":"a","max_tokens":1,"model":"b"}');
    expect(twice.model).toBe('b');
    expect(JSON.parse(twice.body.toString())).toEqual({
      anthropic_version: 'vertex-2023-10-16',
      max_tokens: 1,
    });
  });

  it('passes only the betas Vertex accepts', () => {
    const accepted = ['interleaved-thinking-2025-05-14', 'context-1m-2025-08-07'];
    expect(vertexBetas('claude-code-20250219, interleaved-thinking-2025-05-14', accepted)).toBe(
      'interleaved-thinking-2025-05-14',
    );
    expect(vertexBetas(['context-1m-2025-08-07', 'context-1m-2025-08-07'], accepted)).toBe(
      'context-1m-2025-08-07',
    );
    expect(vertexBetas('oauth-2025-04-20', accepted)).toBeUndefined();
    expect(vertexBetas(undefined, accepted)).toBeUndefined();
  });
});

describe("Vertex: the service account's token exchange", () => {
  const pair = generateKeyPairSync('rsa', { modulusLength: 2048 });
  const privateKey = pair.privateKey.export({ type: 'pkcs8', format: 'pem' }).toString();
  let server: Server;
  let tokenUri: string;
  let answer: { status: number; body: object };
  const received: Array<{ path: string; contentType?: string; form: URLSearchParams }> = [];

  beforeAll(async () => {
    server = createServer((req, res) => {
      let text = '';
      req.on('data', (chunk) => (text += chunk));
      req.on('end', () => {
        received.push({
          path: req.url ?? '',
          contentType: req.headers['content-type'],
          form: new URLSearchParams(text),
        });
        res.writeHead(answer.status, { 'content-type': 'application/json' });
        res.end(JSON.stringify(answer.body));
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    tokenUri = `http://127.0.0.1:${(server.address() as AddressInfo).port}/private/token`;
  });
  afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

  const key = () => ({
    type: 'service_account' as const,
    client_email: 'sa@p.iam.gserviceaccount.com',
    private_key: privateKey,
    private_key_id: 'kid-1',
    token_uri: tokenUri,
  });

  it("signs an RS256 JWT (checked here with node:crypto) for the account, the key file's token_uri and the scope, an hour long", async () => {
    const jwt = await new ServiceAccountTokens(key(), 5000).assertion(1_800_000_000);
    const [header, claims, signature] = jwt.split('.');
    expect(
      verify(
        'RSA-SHA256',
        Buffer.from(`${header}.${claims}`),
        pair.publicKey,
        Buffer.from(signature, 'base64url'),
      ),
    ).toBe(true);
    expect(JSON.parse(Buffer.from(header, 'base64url').toString())).toEqual({
      alg: 'RS256',
      typ: 'JWT',
      kid: 'kid-1',
    });
    expect(JSON.parse(Buffer.from(claims, 'base64url').toString())).toEqual({
      iss: 'sa@p.iam.gserviceaccount.com',
      aud: tokenUri,
      scope: CLOUD_PLATFORM_SCOPE,
      iat: 1_800_000_000,
      exp: 1_800_003_600,
    });
    const other = generateKeyPairSync('rsa', { modulusLength: 2048 }).publicKey;
    expect(
      verify('RSA-SHA256', Buffer.from(`${header}.${claims}`), other, Buffer.from(signature, 'base64url')),
    ).toBe(false);
  });

  it("posts the JWT-bearer grant to the key file's token_uri (not Google's) and keeps the token's lifetime", async () => {
    answer = { status: 200, body: { access_token: 'ya29.fresh', expires_in: 1200, token_type: 'Bearer' } };
    const before = Date.now();
    const token = await new ServiceAccountTokens(key(), 5000).fetch();
    expect(token.token).toBe('ya29.fresh');
    expect(token.expiresAt).toBeGreaterThanOrEqual(before + 1_200_000);
    expect(token.expiresAt).toBeLessThanOrEqual(Date.now() + 1_200_000);
    const sent = received.at(-1)!;
    expect(sent.path).toBe('/private/token');
    expect(sent.contentType).toBe('application/x-www-form-urlencoded');
    expect(sent.form.get('grant_type')).toBe('urn:ietf:params:oauth:grant-type:jwt-bearer');
    expect(sent.form.get('assertion')?.split('.')).toHaveLength(3);
  });

  it("a refusal is `refused` in OAuth's words, a server error `unreachable`; neither quotes the assertion", async () => {
    answer = { status: 400, body: { error: 'invalid_grant', error_description: 'Invalid JWT Signature.' } };
    const refused = await new ServiceAccountTokens(key(), 5000).fetch().catch((e: unknown) => e);
    expect(refused).toBeInstanceOf(TokenError);
    expect(refused).toMatchObject({
      kind: 'refused',
      message: expect.stringContaining('invalid_grant: Invalid JWT Signature.'),
    });
    expect((refused as Error).message).not.toContain(received.at(-1)!.form.get('assertion')!.slice(0, 40));
    answer = { status: 503, body: {} };
    await expect(new ServiceAccountTokens(key(), 5000).fetch()).rejects.toMatchObject({
      kind: 'unreachable',
    });
    await expect(
      new ServiceAccountTokens({ ...key(), private_key: 'not a key' }, 5000).fetch(),
    ).rejects.toMatchObject({ kind: 'refused' });
  });

  it('takes a service-account file to the exchange here, any other credentials file to google-auth-library', () => {
    const dir = mkdtempSync(join(tmpdir(), 'vertex-unit-'));
    try {
      const sa = join(dir, 'sa.json');
      writeFileSync(sa, JSON.stringify(key()));
      const user = join(dir, 'user.json');
      writeFileSync(
        user,
        JSON.stringify({ type: 'authorized_user', client_id: 'c', client_secret: 's', refresh_token: 'r' }),
      );
      expect(tokenSourceFor(sa, {}, 1000).fetcher).toBeInstanceOf(ServiceAccountTokens);
      expect(tokenSourceFor(undefined, { GOOGLE_APPLICATION_CREDENTIALS: sa }, 1000).fetcher).toBeInstanceOf(
        ServiceAccountTokens,
      );
      expect((tokenSourceFor(sa, {}, 1000).fetcher as ServiceAccountTokens).tokenUri).toBe(tokenUri);
      expect(tokenSourceFor(user, {}, 1000).fetcher).toBeInstanceOf(LibraryTokens);
      expect(tokenSourceFor(undefined, {}, 1000).fetcher).toBeInstanceOf(LibraryTokens);
      expect(tokenSourceFor(sa, {}, 1000).problem).toBeUndefined();
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('Vertex: credentials that cannot work are said up front', () => {
  it('a missing file, a file that is not JSON, a service-account key without an RSA key', () => {
    const dir = mkdtempSync(join(tmpdir(), 'vertex-bad-'));
    try {
      const missing = join(dir, 'nowhere.json');
      expect(tokenSourceFor(missing, {}, 1000).problem).toBe(
        `the Google credentials file ${missing} (credentialsFile) cannot be used (ENOENT)`,
      );
      expect(tokenSourceFor(undefined, { GOOGLE_APPLICATION_CREDENTIALS: missing }, 1000).problem).toMatch(
        /\(GOOGLE_APPLICATION_CREDENTIALS\) cannot be used \(ENOENT\)$/,
      );
      const garbled = join(dir, 'garbled.json');
      writeFileSync(garbled, '{"type": "service_account", ');
      expect(tokenSourceFor(garbled, {}, 1000).problem).toMatch(/cannot be used \(not JSON\)$/);
      const keyless = join(dir, 'keyless.json');
      writeFileSync(
        keyless,
        JSON.stringify({ type: 'service_account', client_email: 'a@b', private_key: 'secret-but-not-a-key' }),
      );
      const problem = tokenSourceFor(keyless, {}, 1000).problem;
      expect(problem).toMatch(/holds no RSA private key$/);
      expect(problem).not.toContain('secret-but-not-a-key');
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

function gaxiosDefaults(): { fetchImplementation?: unknown } {
  // eslint-disable-next-line @typescript-eslint/no-require-imports -- a dependency of google-auth-library, not ours
  return (require('gaxios') as { instance: { defaults: { fetchImplementation?: unknown } } }).instance
    .defaults;
}

describe('Vertex: Application Default Credentials through google-auth-library (the metadata server)', () => {
  const saved = { ...process.env };
  let server: Server;
  const asked: Array<{ url: string; flavor?: string }> = [];

  beforeAll(async () => {
    // The GCE metadata server (cloud.google.com/compute/docs/metadata/querying-metadata): answers only requests
    // with `Metadata-Flavor: Google`; the token route gives the default service account's token.
    server = createServer((req, res) => {
      asked.push({ url: req.url ?? '', flavor: req.headers['metadata-flavor'] as string | undefined });
      if (req.headers['metadata-flavor'] !== 'Google') {
        res.writeHead(403).end();
        return;
      }
      const path = (req.url ?? '').split('?')[0];
      if (path === '/computeMetadata/v1/project/project-id') {
        res.writeHead(200, { 'content-type': 'application/text', 'metadata-flavor': 'Google' });
        res.end('metadata-project');
        return;
      }
      if (path !== '/computeMetadata/v1/instance/service-accounts/default/token') {
        res.writeHead(404, { 'metadata-flavor': 'Google' }).end();
        return;
      }
      res.writeHead(200, { 'content-type': 'application/json', 'metadata-flavor': 'Google' });
      res.end(JSON.stringify({ access_token: 'ya29.from-metadata', expires_in: 1800, token_type: 'Bearer' }));
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    // gaxios (google-auth-library's HTTP client) loads node-fetch with a dynamic import(), which Jest's module
    // runtime cannot run (plain Node, the gateway's, can): here its shared instance is given Node's own fetch.
    gaxiosDefaults().fetchImplementation = fetch;
    const home = mkdtempSync(join(tmpdir(), 'vertex-adc-'));
    delete process.env.GOOGLE_APPLICATION_CREDENTIALS;
    Object.assign(process.env, {
      HOME: home, // no gcloud credentials there
      GCE_METADATA_HOST: `127.0.0.1:${(server.address() as AddressInfo).port}`,
      METADATA_SERVER_DETECTION: 'assume-present',
    });
  });
  afterAll(async () => {
    delete gaxiosDefaults().fetchImplementation;
    rmSync(process.env.HOME!, { recursive: true, force: true });
    process.env = saved;
    await new Promise<void>((resolve) => server.close(() => resolve()));
  });

  it("without a key file, the token is the metadata server's, with its expiry", async () => {
    const fetcher = tokenSourceFor(undefined, process.env, 5000).fetcher;
    expect(fetcher).toBeInstanceOf(LibraryTokens);
    const before = Date.now();
    const token = await fetcher.fetch();
    expect(token.token).toBe('ya29.from-metadata');
    expect(token.expiresAt).toBeGreaterThanOrEqual(before + 1_800_000);
    expect(token.expiresAt).toBeLessThanOrEqual(Date.now() + 1_800_000);
    const call = asked.find((a) => a.url.includes('/service-accounts/default/token'))!;
    expect(call.flavor).toBe('Google');
    expect(decodeURIComponent(call.url)).toContain(CLOUD_PLATFORM_SCOPE);
  });
});

describe('Vertex: no Application Default Credentials anywhere', () => {
  const saved = { ...process.env };
  let home: string;

  beforeAll(() => {
    home = mkdtempSync(join(tmpdir(), 'vertex-no-adc-'));
    delete process.env.GOOGLE_APPLICATION_CREDENTIALS;
    delete process.env.CLOUDSDK_CONFIG;
    // No gcloud login in HOME, and not on Google Cloud (no metadata server to ask).
    Object.assign(process.env, { HOME: home, METADATA_SERVER_DETECTION: 'none' });
  });
  afterAll(() => {
    rmSync(home, { recursive: true, force: true });
    process.env = saved;
  });

  it("is refused (the operator's to fix, not retried), with the library's own words", async () => {
    const fetcher = tokenSourceFor(undefined, process.env, 5000).fetcher;
    const failure = await fetcher.fetch().then(
      () => undefined,
      (error: unknown) => error,
    );
    expect(failure).toBeInstanceOf(TokenError);
    expect(failure).toMatchObject({ kind: 'refused' });
    expect((failure as TokenError).message).toMatch(
      /^Application Default Credentials found none: Could not load the default credentials\. /,
    );
  });

  it('the client answers 502 upstream_auth_failed, a fault of the deployment, and logs why', async () => {
    const config = buildConfig(vertexBackend({ baseUrl: 'http://127.0.0.1:9' }), {}).backends
      .v as VertexBackendConfig;
    const logged: string[] = [];
    const tokens = new AccessTokens(tokenSourceFor(undefined, process.env, 5000).fetcher);
    const client = new VertexClient('v', config, tokens, (line) => logged.push(line));
    const sent = client.send({ path: '/x', headers: {}, body: '{}' }, new AbortController().signal);
    await expect(sent).rejects.toMatchObject({ code: 'upstream_auth_failed', deploymentFault: true });
    expect(logged.join('\n')).toContain('Could not load the default credentials');
    await client.close();
  });

  it("keeps a token or a key the library's message quotes out of the log", () => {
    expect(
      libraryWords(
        new Error(
          'request failed: Authorization: Bearer ya29.secret-token {"assertion": "eyJhbGci.eyJpc3Mi.sig"}',
        ),
      ),
    ).toBe('request failed: Authorization: Bearer [redacted] {"assertion": [redacted]}');
  });
});

describe('Vertex: AccessTokens', () => {
  function fake(lifetimeMs: number) {
    let clock = 1_000_000;
    let count = 0;
    const pending: Array<() => void> = [];
    const fetcher: TokenFetcher = {
      fetch: () =>
        new Promise<AccessToken>((resolve) => {
          const n = ++count;
          pending.push(() => resolve({ token: `t${n}`, expiresAt: clock + lifetimeMs }));
        }),
    };
    const tokens = new AccessTokens(fetcher, () => clock);
    return {
      tokens,
      fetches: () => count,
      release: async () => {
        pending.splice(0).forEach((resolve) => resolve());
        await new Promise((resolve) => setImmediate(resolve));
      },
      advance: (ms: number) => (clock += ms),
    };
  }

  it('fetches once for concurrent callers and keeps the token', async () => {
    const f = fake(3_600_000);
    const both = Promise.all([f.tokens.token(), f.tokens.token()]);
    await f.release();
    expect(await both).toEqual(['t1', 't1']);
    expect(await f.tokens.token()).toBe('t1');
    expect(f.fetches()).toBe(1);
  });

  it("replaces an hour's token five minutes before it expires, a short one a quarter of its life early", async () => {
    const hour = fake(3_600_000);
    const first = hour.tokens.token();
    await hour.release();
    await first;
    hour.advance(3_600_000 - 300_001);
    expect(await hour.tokens.token()).toBe('t1');
    hour.advance(2);
    const second = hour.tokens.token();
    await hour.release();
    expect(await second).toBe('t2');

    const short = fake(4000);
    const a = short.tokens.token();
    await short.release();
    await a;
    short.advance(2999);
    expect(await short.tokens.token()).toBe('t1');
    short.advance(1);
    const b = short.tokens.token();
    await short.release();
    expect(await b).toBe('t2');
  });

  it('drops a token Vertex refused, and names recent tokens as secrets', async () => {
    const f = fake(3_600_000);
    const a = f.tokens.token();
    await f.release();
    f.tokens.refused(await a);
    const b = f.tokens.token();
    await f.release();
    expect(await b).toBe('t2');
    expect(f.tokens.secrets()).toEqual(['t2', 't1']);
  });
});

describe('Vertex: the client', () => {
  it('a request whose client leaves while the token is being fetched ends at once; the fetch serves the next', async () => {
    const config = buildConfig(vertexBackend({ baseUrl: 'http://127.0.0.1:9' }), {}).backends
      .v as VertexBackendConfig;
    let release!: (token: AccessToken) => void;
    let fetches = 0;
    const tokens = new AccessTokens({
      fetch: () => {
        fetches++;
        return new Promise<AccessToken>((resolve) => (release = resolve));
      },
    });
    const client = new VertexClient('v', config, tokens, () => undefined);
    const left = new AbortController();
    const call = { path: '/x', headers: {}, body: '{}' };
    const sent = client.send(call, left.signal);
    left.abort(new Error('client left'));
    await expect(sent).rejects.toThrow('client left');
    const waiting = tokens.token();
    release({ token: 'ya29.t', expiresAt: Date.now() + 3_600_000 });
    expect(await waiting).toBe('ya29.t');
    expect(fetches).toBe(1);
    await client.close();
  });
});
