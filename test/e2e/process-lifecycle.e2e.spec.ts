import { randomBytes } from 'node:crypto';
import Redis from 'ioredis';
import OpenAI from 'openai';
import { eventually } from '../support/eventually';
import { freePort } from '../support/free-port';
import { run, waitForListening, writeConfig } from '../support/gateway-process';
import { OpenAIUpstream } from '../support/openai-upstream';
import { deletePrefix, REDIS_URL } from '../support/test-gateway';

describe('the gateway process', () => {
  it.each([
    [
      'an unknown backend',
      'admin: { apiKey: k }\nbackends: {}\nmodels:\n  m: { backend: nowhere, upstreamModel: x }\n',
      /models\.m\.backend: unknown backend "nowhere"/,
    ],
    [
      'a bad port',
      'server: { port: "eighty" }\nadmin: { apiKey: k }\n',
      /server\.port: must be an integer number \(got "eighty"\)/,
    ],
    [
      'a missing secret',
      'admin: { apiKey: "${NOT_SET_ANYWHERE}" }\n',
      /admin\.apiKey: environment variable NOT_SET_ANYWHERE is not set/,
    ],
    [
      'a bad backend URL',
      'admin: { apiKey: k }\nbackends:\n  b: { type: openai, baseUrl: "not a url" }\n',
      /backends\.b\.baseUrl: must be a URL/,
    ],
    [
      'an unknown backend type',
      'admin: { apiKey: k }\nbackends:\n  b: { type: soap, baseUrl: "http://x" }\n',
      /backends\.b\.type: unknown backend type "soap" \(known types: openai, anthropic, gemini, local(, [a-z]+)*\)/,
    ],
    [
      'a typo in the type of a backend a model uses',
      'admin: { apiKey: k }\nbackends:\n  b: { type: openia, baseUrl: "http://x" }\nmodels:\n  m: { backend: b, upstreamModel: x }\n',
      /backends\.b\.type: unknown backend type "openia" \(known types: openai, anthropic, gemini, local(, [a-z]+)*\)/,
    ],
  ])('refuses to start with %s, naming the key, in one line', async (_what, yaml, message) => {
    const { output, exit } = run(writeConfig(yaml));
    expect(await exit).toBe(78);
    expect(output()).toMatch(message);
    // The header and the one problem: no second, contradicting line, no stack trace.
    expect(output().trim().split('\n')).toHaveLength(2);
  });

  it('PORT overrides server.port; health is public; ready reflects Redis; SIGTERM drains an in-flight stream', async () => {
    const upstream = await new OpenAIUpstream().start();
    upstream.delayMs = 150;
    const prefix = `sy-test:${randomBytes(6).toString('hex')}:`;
    const redis = new Redis(REDIS_URL);
    const config = writeConfig(`
server: { port: 8080, host: 127.0.0.1, shutdownGraceMs: 5000 }
redis: { url: "${REDIS_URL}", keyPrefix: "${prefix}" }
admin: { apiKey: "\${ADMIN}" }
backends:
  standin: { type: openai, baseUrl: "${upstream.url}", apiKey: "\${UPSTREAM_KEY}" }
models:
  slow: { backend: standin, upstreamModel: slow }
teams:
  ops: { models: ["*"] }
`);
    const port = String(await freePort());
    const gw = run(config, { ADMIN: 'adm', UPSTREAM_KEY: 'upstream-secret-key', PORT: port });
    try {
      const url = await waitForListening(gw.output);
      expect(url).toBe(`http://127.0.0.1:${port}`);
      expect(await (await fetch(`${url}/health/live`)).json()).toEqual({ status: 'ok' });
      const ready = await fetch(`${url}/health/ready`);
      expect(ready.status).toBe(200);
      expect(((await ready.json()) as any).checks).toEqual({ config: 'ok', redis: 'ok', accepting: true });

      const token = await fetch(`${url}/admin/v1/teams/ops/tokens`, {
        method: 'POST',
        headers: { authorization: 'Bearer adm' },
      }).then((r) => r.json() as Promise<any>);
      const client = new OpenAI({ apiKey: token.token, baseURL: `${url}/v1`, maxRetries: 0 });
      const stream = await client.chat.completions.create({
        model: 'slow',
        stream: true,
        messages: [{ role: 'user', content: 'a b c d e f' }],
      });
      const iterator = stream[Symbol.asyncIterator]();
      await iterator.next();

      gw.child.kill('SIGTERM');
      // Draining: health keeps answering (ready: 503, not accepting) and new requests get a 503 to retry elsewhere.
      await eventually(async () => expect((await fetch(`${url}/health/ready`)).status).toBe(503));
      const draining = await fetch(`${url}/health/ready`);
      expect(((await draining.json()) as any).checks.accepting).toBe(false);
      expect(draining.headers.get('connection')).toBe('close');
      expect((await fetch(`${url}/health/live`)).status).toBe(200);
      const refused = await client.chat.completions
        .create({ model: 'slow', messages: [{ role: 'user', content: 'late' }] })
        .catch((e: unknown) => e);
      expect(refused).toBeInstanceOf(OpenAI.InternalServerError);
      expect((refused as InstanceType<typeof OpenAI.APIError>).status).toBe(503);
      expect((refused as InstanceType<typeof OpenAI.APIError>).code).toBe('server_shutting_down');
      let text = '';
      for (let next = await iterator.next(); !next.done; next = await iterator.next())
        text += next.value.choices[0]?.delta.content ?? '';
      expect(text).toBe('echo: a b c d e f');
      expect(await gw.exit).toBe(0);
      expect(gw.output()).not.toContain(token.token);
    } finally {
      gw.child.kill('SIGKILL');
      await upstream.stop();
      await deletePrefix(redis, prefix);
      await redis.quit();
    }
  });

  it('refuses to start when Redis does not answer: one line naming the URL (password hidden) and what to do', async () => {
    const config = writeConfig(`
server: { port: 0, host: 127.0.0.1 }
redis: { url: "redis://ops:hunter2@127.0.0.1:1" }
admin: { apiKey: k }
`);
    const gw = run(config);
    try {
      expect(await gw.exit).toBe(69);
      const lines = gw.output().trim().split('\n');
      expect(lines).toHaveLength(1);
      expect(lines[0]).toMatch(
        /^switchyard: cannot reach Redis at redis:\/\/ops:\*\*\*@127\.0\.0\.1:1 \(.*ECONNREFUSED.*\)\. Start it .*REDIS_URL/,
      );
      expect(gw.output()).not.toContain('hunter2');
    } finally {
      gw.child.kill('SIGKILL');
    }
  });
});
