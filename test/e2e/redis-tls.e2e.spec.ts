import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { eventually } from '../support/eventually';
import { freePort } from '../support/free-port';
import { run, stopChild, waitForListening, writeConfig } from '../support/gateway-process';
import { OpenAIUpstream } from '../support/openai-upstream';
import { adminApiAt, waitForUsageSummary } from '../support/usage';

/**
 * Redis over TLS with a password, as a managed Redis is usually reached: a private redis-server with a
 * certificate from a CA made by the test (openssl), and the built gateway trusting that CA through Node's own
 * NODE_EXTRA_CA_CERTS. Without the CA the certificate is refused: verification is on.
 */
describe('Redis over TLS with a password', () => {
  jest.setTimeout(120_000);
  const dir = mkdtempSync(join(tmpdir(), 'switchyard-tls-'));
  let port: number; // one the kernel says is free (redis-server cannot listen on 0 and report its port)
  const password = 'tls-test-password';
  let redis: ChildProcess;
  let upstream: OpenAIUpstream;

  beforeAll(async () => {
    port = await freePort();
    const openssl = (...args: string[]) => execFileSync('openssl', args, { cwd: dir, stdio: 'ignore' });
    openssl(
      'req',
      '-x509',
      '-newkey',
      'rsa:2048',
      '-nodes',
      '-keyout',
      'ca.key',
      '-out',
      'ca.pem',
      '-days',
      '2',
      '-subj',
      '/CN=switchyard-test-ca',
    );
    openssl(
      'req',
      '-newkey',
      'rsa:2048',
      '-nodes',
      '-keyout',
      'server.key',
      '-out',
      'server.csr',
      '-subj',
      '/CN=127.0.0.1',
    );
    writeFileSync(join(dir, 'ext'), 'subjectAltName=IP:127.0.0.1\n');
    openssl(
      'x509',
      '-req',
      '-in',
      'server.csr',
      '-CA',
      'ca.pem',
      '-CAkey',
      'ca.key',
      '-CAcreateserial',
      '-out',
      'server.pem',
      '-days',
      '2',
      '-extfile',
      'ext',
    );
    redis = spawn(
      'redis-server',
      [
        '--port',
        '0',
        '--tls-port',
        String(port),
        '--bind',
        '127.0.0.1',
        '--tls-cert-file',
        'server.pem',
        '--tls-key-file',
        'server.key',
        '--tls-ca-cert-file',
        'ca.pem',
        '--tls-auth-clients',
        'no',
        '--requirepass',
        password,
        '--save',
        '',
        '--dir',
        dir,
      ],
      { cwd: dir, stdio: 'ignore' },
    );
    await eventually(
      () => {
        const pong = execFileSync(
          'redis-cli',
          [
            '-p',
            String(port),
            '--tls',
            '--cacert',
            join(dir, 'ca.pem'),
            '--no-auth-warning',
            '-a',
            password,
            'ping',
          ],
          { encoding: 'utf8', timeout: 2000 },
        );
        expect(pong.trim()).toBe('PONG');
      },
      10_000,
      100,
    );
    upstream = await new OpenAIUpstream().start();
  });
  afterAll(async () => {
    await stopChild(redis);
    await upstream?.stop();
  });

  const config = () =>
    writeConfig(`
server: { port: 0, host: 127.0.0.1 }
redis: { url: "rediss://:\${REDIS_PASSWORD}@127.0.0.1:${port}", keyPrefix: "sy-tls:" }
admin: { apiKey: adm }
backends:
  standin: { type: openai, baseUrl: "${upstream.url}", apiKey: upstream-secret-key }
models:
  echo: { backend: standin, upstreamModel: echo }
teams:
  secure: { models: ["*"] }
`);

  it('serves and accounts with Redis reached over TLS, the password never in its output', async () => {
    const gw = run(config(), { REDIS_PASSWORD: password, NODE_EXTRA_CA_CERTS: join(dir, 'ca.pem') });
    try {
      const url = await waitForListening(gw.output);
      const token = (await (
        await fetch(`${url}/admin/v1/teams/secure/tokens`, {
          method: 'POST',
          headers: { authorization: 'Bearer adm' },
        })
      ).json()) as { token: string };
      const answer = await fetch(`${url}/v1/chat/completions`, {
        method: 'POST',
        headers: { authorization: `Bearer ${token.token}`, 'content-type': 'application/json' },
        body: JSON.stringify({ model: 'echo', messages: [{ role: 'user', content: 'over tls' }] }),
      });
      expect(answer.status).toBe(200);
      await waitForUsageSummary(adminApiAt(url, 'adm'), 'team=secure', 1);
      expect(gw.output()).not.toContain(password);
    } finally {
      await stopChild(gw.child);
    }
  });

  it('refuses to start when the certificate cannot be verified, naming the URL without the password', async () => {
    const gw = run(config(), { REDIS_PASSWORD: password });
    expect(await gw.exit).toBe(69);
    expect(gw.output()).toMatch(
      new RegExp(
        `cannot reach Redis at rediss://:\\*+@127\\.0\\.0\\.1:${port}|cannot reach Redis at rediss://127\\.0\\.0\\.1:${port}`,
      ),
    );
    expect(gw.output()).toMatch(/certificate/i);
    expect(gw.output()).not.toContain(password);
  });
});
