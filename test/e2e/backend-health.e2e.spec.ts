import { createServer, type Server } from 'node:net';
import Anthropic from '@anthropic-ai/sdk';
import OpenAI from 'openai';
import { eventually } from '../support/eventually';
import { freePort } from '../support/free-port';
import { LeakyUpstream } from '../support/leaky-upstream';
import { OpenAIUpstream } from '../support/openai-upstream';
import { startTestGateway, type TestGateway } from '../support/test-gateway';

const ask = (model: string) => ({ model, messages: [{ role: 'user' as const, content: 'hello there' }] });
const WRONG_KEY = 'sk-proj-Wr0ngKeyAbCdEfGhIjKlMnOpQrStUv';
const WARN = 40;
const ERROR = 50;

/**
 * What the gateway knows about its backends, and what it does with it: a refused key is the deployment's fault
 * (never called again for the request, its circuit opened at once, logged at error with the vendor's words
 * scrubbed); a backend unreachable at start-up or a local model that cannot load is known to be down (skipped,
 * its models not listed, readiness and the admin view say why); a model whose every deployment is down is not
 * listed until one comes back.
 */
describe('backend health', () => {
  jest.setTimeout(60_000);
  let good: OpenAIUpstream;
  let leaky: LeakyUpstream;
  let gw: TestGateway;
  let client: OpenAI;
  let offlinePort: number;
  let revivedPort: number;
  let revived: Server | undefined;

  const listed = async () => (await client.models.list()).data.map((model) => model.id);
  const calls = (upstream: { requests: Array<{ body: Record<string, unknown> }> }, model: string) =>
    upstream.requests.filter((r) => r.body.model === model).length;
  const deployments = async () =>
    (await gw.admin('GET', '/admin/v1/deployments')).body.data as Array<Record<string, any>>;
  const ready = async () => {
    const response = await fetch(`${gw.url}/health/ready`);
    return { status: response.status, body: (await response.json()) as Record<string, any> };
  };

  beforeAll(async () => {
    [good, leaky] = await Promise.all([new OpenAIUpstream().start(), new LeakyUpstream().start()]);
    [offlinePort, revivedPort] = [await freePort(), await freePort()];
    gw = await startTestGateway({
      upstreamUrl: good.url,
      config: {
        // Re-probes of an unreachable backend come every cooldownMs.
        routing: { retries: { attempts: 2, backoffMs: 5 }, circuit: { failures: 2, cooldownMs: 1000 } },
        backends: {
          good: { type: 'openai', baseUrl: good.url, apiKey: '${TEST_UPSTREAM_KEY}' },
          // The vendor refuses this key, echoing it masked in its message.
          'bad-key': { type: 'openai', baseUrl: leaky.url('openai'), apiKey: WRONG_KEY },
          // The same refusal on backends of their own, for the tests that read what a refusal leaves (logs,
          // readiness): a refused key opens its deployment's circuit at once, so on `bad-key` the test that runs
          // first would leave the others nothing to call, and the result would depend on the order.
          'bad-key-logged': { type: 'openai', baseUrl: leaky.url('openai'), apiKey: WRONG_KEY },
          'bad-key-ready': { type: 'openai', baseUrl: leaky.url('openai'), apiKey: WRONG_KEY },
          // Nothing listens here at start-up (an Ollama that is not running). It stays down.
          ollama: { type: 'openai', baseUrl: `http://127.0.0.1:${offlinePort}/v1` },
          // Down at start-up too, and brought up by the re-probe test only.
          'ollama-revived': { type: 'openai', baseUrl: `http://127.0.0.1:${revivedPort}/v1` },
          'no-file': { type: 'local', local: { modelPath: '/nonexistent/model.gguf', threads: 1 } },
        },
        models: {
          'only-bad-key': { backend: 'bad-key', upstreamModel: 'leak.masked.401' },
          'logged-bad-key': { backend: 'bad-key-logged', upstreamModel: 'leak.masked.401' },
          'ready-bad-key': { backend: 'bad-key-ready', upstreamModel: 'leak.masked.401' },
          'bad-key-then-good': {
            routing: 'priority',
            deployments: [
              { backend: 'bad-key', upstreamModel: 'leak.masked.403' },
              { backend: 'good', upstreamModel: 'echo' },
            ],
          },
          'llama3.2': { backend: 'ollama', upstreamModel: 'llama3.2' },
          'llama-revived': { backend: 'ollama-revived', upstreamModel: 'llama3.2' },
          'ollama-or-good': {
            routing: 'priority',
            deployments: [
              { backend: 'ollama', upstreamModel: 'llama3.2' },
              { backend: 'good', upstreamModel: 'echo' },
            ],
          },
          'missing-file': { backend: 'no-file', upstreamModel: 'x' },
          failing: { backend: 'good', upstreamModel: 'status-500' },
        },
      },
    });
    const { token } = await gw.teamToken('health-watchers');
    client = gw.openai(token);
  });
  afterAll(async () => {
    await gw.close();
    await Promise.all([good.stop(), leaky.stop()]);
    await new Promise((resolve) => (revived ? revived.close(resolve) : resolve(undefined)));
  });

  describe("a refused upstream key (401/403) is the deployment's fault", () => {
    it('is called once, not retried on the same deployment: 502 upstream_auth_failed after one call', async () => {
      const before = calls(leaky, 'leak.masked.401');
      const error = (await client.chat.completions
        .create(ask('only-bad-key'))
        .catch((e: unknown) => e)) as InstanceType<typeof OpenAI.APIError>;
      expect(error.status).toBe(502);
      expect(error.code).toBe('upstream_auth_failed');
      expect(calls(leaky, 'leak.masked.401') - before).toBe(1);
    });

    it('moves to the next deployment at once, and later requests skip it (its circuit opened at once)', async () => {
      const [badBefore, goodBefore] = [calls(leaky, 'leak.masked.403'), calls(good, 'echo')];
      const { data, response } = await client.chat.completions
        .create(ask('bad-key-then-good'))
        .withResponse();
      expect(data.choices[0].message.content).toBe('echo: hello there');
      expect(response.headers.get('x-switchyard-backend')).toBe('good');
      expect(response.headers.get('x-switchyard-attempts')).toBe('2');
      expect([calls(leaky, 'leak.masked.403') - badBefore, calls(good, 'echo') - goodBefore]).toEqual([1, 1]);
      const next = await client.chat.completions.create(ask('bad-key-then-good')).withResponse();
      expect(next.response.headers.get('x-switchyard-attempts')).toBe('1');
      expect(calls(leaky, 'leak.masked.403') - badBefore).toBe(1);
      const row = (await deployments()).find((d) => d.deployment === 'bad-key/leak.masked.403')!;
      expect(row.circuit).toMatchObject({
        state: 'open',
        consecutiveFailures: 1,
        lastError: 'upstream_auth_failed',
      });
      expect(row.circuit.lastErrorMessage).toMatch(/^Incorrect API key provided: /);
      expect(row.down).toMatch(/circuit open/);
    });

    it("is logged at error with the vendor's message, the key scrubbed from it", async () => {
      const error = await client.chat.completions.create(ask('logged-bad-key')).catch((e: unknown) => e);
      expect((error as InstanceType<typeof OpenAI.APIError>).status).toBe(502);
      const lines = await eventually(() => {
        const found = gw.logs.filter(
          (l) => l.level === ERROR && l.deployment === 'bad-key-logged/leak.masked.401',
        );
        expect(found).toHaveLength(1);
        return found;
      });
      expect(lines[0]).toMatchObject({
        backend: 'bad-key-logged',
        error: 'upstream_auth_failed',
        upstreamStatus: 401,
        reason: expect.stringMatching(/^Incorrect API key provided: \[redacted\]/),
      });
      expect(String(lines[0].msg)).toMatch(
        /rejected the gateway's credentials.*HTTP 401: Incorrect API key provided/,
      );
      const everything = gw.rawLogs.join('\n');
      for (let at = 0; at + 8 <= WRONG_KEY.length; at++)
        expect(everything).not.toContain(WRONG_KEY.slice(at, at + 8));
    });

    it('readiness stays 200 but says the backend refused the credentials', async () => {
      expect((await ready()).body.backends['bad-key-ready']).toEqual({ usable: true });
      const error = await client.chat.completions.create(ask('ready-bad-key')).catch((e: unknown) => e);
      expect((error as InstanceType<typeof OpenAI.APIError>).status).toBe(502);
      const { status, body } = await ready();
      expect(status).toBe(200);
      expect(body.status).toBe('degraded');
      expect(body.backends['bad-key-ready']).toEqual({
        usable: false,
        reason: expect.stringMatching(
          /refused the gateway's credentials: Incorrect API key provided: \[redacted\]/,
        ),
      });
      expect(body.backends.good).toEqual({ usable: true });
    });
  });

  describe('a backend unreachable at start-up', () => {
    it('is logged at warn, and readiness names it', async () => {
      expect(
        gw.logs.some(
          (l) => l.level === WARN && l.backend === 'ollama' && /unreachable at start-up/.test(String(l.msg)),
        ),
      ).toBe(true);
      const { status, body } = await ready();
      expect(status).toBe(200);
      expect(body.unusable_backends).toEqual(expect.arrayContaining(['ollama']));
      expect(body.backends.ollama.reason).toMatch(
        new RegExp(`unreachable at start-up: cannot connect to 127.0.0.1:${offlinePort} \\(ECONNREFUSED\\)`),
      );
    });

    it('is skipped without a call when the model has another deployment, and that model is listed', async () => {
      const { data, response } = await client.chat.completions.create(ask('ollama-or-good')).withResponse();
      expect(data.choices[0].message.content).toBe('echo: hello there');
      expect(response.headers.get('x-switchyard-attempts')).toBe('1');
      expect(await listed()).toContain('ollama-or-good');
    });

    it("hides a model it alone serves, and the admin view says why; a request still gets the backend's own error", async () => {
      expect(await listed()).not.toContain('llama3.2');
      const row = (await deployments()).find((d) => d.model === 'llama3.2')!;
      expect(row).toMatchObject({
        model_listed: false,
        down: expect.stringMatching(/unreachable at start-up/),
        model_hidden_because: expect.stringMatching(
          /every deployment is known to be down: ollama\/llama3.2: unreachable at start-up/,
        ),
      });
      const error = (await client.chat.completions
        .create(ask('llama3.2'))
        .catch((e: unknown) => e)) as InstanceType<typeof OpenAI.APIError>;
      expect(error.status).toBe(502);
      expect(error.code).toBe('upstream_unreachable');
    });

    it('is listed again once a re-probe reaches it', async () => {
      // Its own backend: bringing `ollama` up would change what the other tests of this block see.
      expect(await listed()).not.toContain('llama-revived');
      revived = createServer((socket) => socket.destroy());
      await new Promise<void>((resolve) => revived!.listen(revivedPort, '127.0.0.1', resolve));
      await eventually(async () => expect(await listed()).toContain('llama-revived'), 10_000, 100);
      expect((await deployments()).find((d) => d.model === 'llama-revived')).toMatchObject({
        model_listed: true,
        down: null,
        model_hidden_because: null,
      });
      expect((await ready()).body.backends['ollama-revived']).toEqual({ usable: true });
    });
  });

  describe('a local model whose file is missing', () => {
    it('is logged at error, not listed, and readiness names it (still 200)', async () => {
      await eventually(
        async () =>
          expect(
            gw.logs.some(
              (l) => l.level === ERROR && l.backend === 'no-file' && /unavailable/.test(String(l.msg)),
            ),
          ).toBe(true),
        20_000,
        100,
      );
      expect(await listed()).not.toContain('missing-file');
      const { status, body } = await ready();
      expect(status).toBe(200);
      expect(body.backends['no-file']).toEqual({
        usable: false,
        reason: expect.stringMatching(/^the local model cannot load: /),
      });
      expect((await deployments()).find((d) => d.model === 'missing-file')).toMatchObject({
        model_listed: false,
        model_hidden_because: expect.stringMatching(/cannot load/),
      });
    });

    // A configuration fault, like a missing key (unservable-models.e2e.spec.ts): each API's permission shape, a 403
    // its SDK does not retry (it was a 503, which they retried as if the model were overloaded).
    it.each([
      ['chat completions', (c: OpenAI) => c.chat.completions.create(ask('missing-file'))],
      [
        'a streamed chat completion',
        (c: OpenAI) => c.chat.completions.create({ ...ask('missing-file'), stream: true }),
      ],
      ['responses', (c: OpenAI) => c.responses.create({ model: 'missing-file', input: 'hi' })],
      // Listed nowhere, but configured: not a 404 that says the model does not exist.
      ['models.retrieve', (c: OpenAI) => c.models.retrieve('missing-file')],
    ])('openai SDK, %s: PermissionDeniedError model_unavailable once, not retried', async (_api, call) => {
      let sent = 0;
      const counting = new OpenAI({
        apiKey: client.apiKey,
        baseURL: client.baseURL,
        fetch: (input, init) => (sent++, fetch(input, init)),
      });
      const error = (await (call as (c: OpenAI) => Promise<unknown>)(counting).catch(
        (e: unknown) => e,
      )) as InstanceType<typeof OpenAI.APIError>;
      expect(error).toBeInstanceOf(OpenAI.PermissionDeniedError);
      expect(error.code).toBe('model_unavailable');
      expect(error.message).toMatch(/cannot load: .*npm run model:fetch/);
      expect(sent).toBe(1);
    });

    it('@anthropic-ai/sdk, messages: PermissionDeniedError (permission_error) once, not retried', async () => {
      let sent = 0;
      const anthropic = new Anthropic({
        apiKey: client.apiKey,
        baseURL: client.baseURL.replace(/\/v1$/, ''),
        fetch: (input, init) => (sent++, fetch(input, init)),
      });
      const error = (await anthropic.messages
        .create({ model: 'missing-file', max_tokens: 16, messages: [{ role: 'user', content: 'hi' }] })
        .catch((e: unknown) => e)) as InstanceType<typeof Anthropic.APIError>;
      expect(error).toBeInstanceOf(Anthropic.PermissionDeniedError);
      expect((error.error as { error?: { type?: string } }).error?.type).toBe('permission_error');
      expect(error.message).toMatch(/cannot load/);
      expect(sent).toBe(1);
    });
  });

  describe('a deployment whose circuit opens', () => {
    it('hides the model it alone serves until the cool-down lets a probe through', async () => {
      expect(await listed()).toContain('failing');
      for (let i = 0; i < 2; i++) await client.chat.completions.create(ask('failing')).catch(() => undefined);
      expect(await listed()).not.toContain('failing');
      expect((await deployments()).find((d) => d.model === 'failing')).toMatchObject({
        model_listed: false,
        down: expect.stringMatching(/circuit open after \d+ failure/),
      });
      expect(
        gw.logs.some(
          (l) =>
            l.level === WARN &&
            l.deployment === 'good/status-500' &&
            /circuit of deployment good\/status-500 opened/.test(String(l.msg)),
        ),
      ).toBe(true);
      // Half-open after the cool-down: listed again, and the next request probes it.
      await eventually(async () => expect(await listed()).toContain('failing'), 5_000, 100);
    });
  });
});
