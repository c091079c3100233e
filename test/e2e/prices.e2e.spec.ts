import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { runCli, writeConfig } from '../support/gateway-process';
import { OpenAIUpstream } from '../support/openai-upstream';
import { eventually } from '../support/eventually';
import { startTestGateway, type TestGateway } from '../support/test-gateway';

/**
 * Prices from the price data (@pydantic/genai-prices' bundled data) through the whole gateway: what the admin view
 * says each deployment costs and where the figure came from, and the warning at start for a configured model the
 * data marks deprecated or its vendor is known to retire. (How requests are costed from those prices: spend.e2e.spec.ts.)
 */
describe('prices', () => {
  let openai: OpenAIUpstream;
  let gw: TestGateway;

  beforeAll(async () => {
    openai = await new OpenAIUpstream().start();
    gw = await startTestGateway({
      upstreamUrl: openai.url,
      config: {
        routing: { probe: { timeoutMs: 0 } }, // the cloud backends below are never called
        backends: {
          azure: { type: 'azure', baseUrl: 'https://contoso.openai.azure.com', apiKey: 'k' },
          google: {
            type: 'gemini',
            baseUrl: 'https://generativelanguage.googleapis.com/v1beta',
            apiKey: 'k',
          },
        },
        models: {
          mini: { backend: 'standin', upstreamModel: 'gpt-4o-mini' },
          fixed: { backend: 'standin', upstreamModel: 'gpt-4o-mini', price: { input: 1, output: 2 } },
          'azure-gpt': {
            deployments: [
              { backend: 'azure', upstreamModel: 'gpt4o-prod', price: { model: 'gpt-4o' } },
              { backend: 'azure', upstreamModel: 'gpt4o-eu' },
            ],
          },
          'old-flash': { backend: 'google', upstreamModel: 'gemini-2.5-flash-preview' },
        },
      },
    });
  });
  afterAll(async () => {
    await gw?.close();
    await openai?.stop();
  });

  it('GET /admin/v1/prices/<model>: each deployment, its figures and their source', async () => {
    const mini = await gw.admin('GET', '/admin/v1/prices/mini');
    expect(mini.status).toBe(200);
    expect(mini.body).toEqual({
      object: 'model.prices',
      model: 'mini',
      currency: 'USD',
      priceData: expect.stringMatching(/^@pydantic\/genai-prices \S+ \(bundled data\)$/),
      deployments: [
        {
          backend: 'standin',
          upstreamModel: 'gpt-4o-mini',
          price: { input: 0.15, output: 0.6, cachedInput: 0.075 },
          source: { kind: 'price-data', provider: 'openai', model: 'gpt-4o-mini', data: mini.body.priceData },
          deprecated: false,
          // Not in the price data's flags, but in the table of known retirement dates (OpenAI: 2027-01-14).
          retirement: {
            status: expect.stringMatching(/^(retiring|retired)$/),
            date: '2027-01-14',
            source: 'https://developers.openai.com/api/docs/deprecations',
          },
        },
      ],
    });
    const fixed = await gw.admin('GET', '/admin/v1/prices/fixed');
    expect(fixed.body.deployments[0]).toMatchObject({
      price: { input: 1, output: 2 },
      source: { kind: 'model' },
    });
    const azure = await gw.admin('GET', '/admin/v1/prices/azure-gpt');
    expect(azure.body.deployments).toEqual([
      expect.objectContaining({
        upstreamModel: 'gpt4o-prod',
        price: expect.objectContaining({ input: 2.5, output: 10 }),
        source: expect.objectContaining({ kind: 'price-data', provider: 'azure', model: 'gpt-4o' }),
      }),
      // A deployment's own name is not a priced model id: unknown, never 0, saying what was looked up.
      expect.objectContaining({
        upstreamModel: 'gpt4o-eu',
        price: null,
        source: null,
        lookedUp: { provider: 'azure', model: 'gpt4o-eu' },
      }),
    ]);
    const missing = await gw.admin('GET', '/admin/v1/prices/no-such-model');
    expect(missing.status).toBe(404);
    expect(missing.body.error.code).toBe('model_not_found');
    const anonymous = await fetch(`${gw.url}/admin/v1/prices/mini`);
    expect(anonymous.status).toBe(401);
  });

  it('warns at start of a configured model the price data marks deprecated, and the admin view says so', async () => {
    const warning = await eventually(() => {
      const found = gw.logs.find((line) => /is marked deprecated in the price data/.test(String(line.msg)));
      expect(found).toBeDefined();
      return found!;
    });
    expect(warning).toMatchObject({
      level: 40,
      model: 'old-flash',
      upstreamModel: 'gemini-2.5-flash-preview',
    });
    expect(gw.logs.some((line) => /^prices: @pydantic\/genai-prices/.test(String(line.msg)))).toBe(true);
    const view = await gw.admin('GET', '/admin/v1/prices/old-flash');
    expect(view.body.deployments[0]).toMatchObject({
      deprecated: true,
      source: { kind: 'price-data', provider: 'google' },
    });
    expect(view.body.deployments[0]).not.toHaveProperty('retirement');
  });

  it('warns at start of a configured model its vendor retires, from the table of known retirement dates', async () => {
    // gpt-4o-mini: OpenAI shuts it down on 2027-01-14, which the bundled price data does not mark.
    const warnings = await eventually(() => {
      const found = gw.logs.filter(
        (line) => line.upstreamModel === 'gpt-4o-mini' && /retir/.test(String(line.msg)),
      );
      expect(found.map((line) => line.model).sort()).toEqual(['fixed', 'mini']);
      return found;
    });
    for (const warning of warnings)
      expect(warning).toMatchObject({
        level: 40,
        backend: 'standin',
        retirement: { date: '2027-01-14' },
        msg: expect.stringMatching(
          /(is retiring: its vendor shuts it down on|was retired by its vendor on) 2027-01-14/,
        ),
      });
  });

  describe('switchyard prices update (the built CLI)', () => {
    const data = [
      {
        id: 'openai',
        name: 'OpenAI',
        api_pattern: 'https://api\\.openai\\.com',
        models: [
          {
            id: 'gpt-4o-mini',
            match: { equals: 'gpt-4o-mini' },
            prices: { input_mtok: 0.2, output_mtok: 0.7 },
          },
        ],
      },
    ];
    let server: Server;
    let dir: string;
    let base: string;

    beforeAll(async () => {
      server = createServer((req, res) => {
        if (req.url === '/data.json')
          res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(data));
        else if (req.url === '/broken.json')
          res.writeHead(200, { 'content-type': 'text/html' }).end('<html>rate limited</html>');
        else res.writeHead(404).end();
      });
      await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
      base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
      dir = mkdtempSync(join(tmpdir(), 'price-update-'));
    });
    afterAll(async () => {
      await new Promise((resolve) => server.close(resolve));
      rmSync(dir, { recursive: true, force: true });
    });

    it('writes the fetched data to the file, and refuses what is not price data without touching the file', async () => {
      const config = writeConfig('admin: { apiKey: k }\n');
      const out = join(dir, 'price-data.json');
      const fetched = await runCli(config, ['prices', 'update', '--url', `${base}/data.json`, '--out', out]);
      expect(fetched.code).toBe(0);
      expect(JSON.parse(fetched.stdout)).toEqual({
        file: out,
        from: `${base}/data.json`,
        providers: 1,
        models: 1,
        next: `set billing.priceData: ${out} and restart the gateway to use it`,
      });
      expect(JSON.parse(readFileSync(out, 'utf8'))).toEqual(data);
      const broken = await runCli(config, ['prices', 'update', '--url', `${base}/broken.json`, '--out', out]);
      expect(broken.code).toBe(1);
      expect(broken.output).toContain('did not send genai-prices data');
      expect(JSON.parse(readFileSync(out, 'utf8'))).toEqual(data);
      const missing = await runCli(config, [
        'prices',
        'update',
        '--url',
        `${base}/gone.json`,
        '--out',
        join(dir, 'other.json'),
      ]);
      expect(missing.code).toBe(1);
      expect(missing.output).toContain('answered HTTP 404');
      expect(existsSync(join(dir, 'other.json'))).toBe(false);
    });
  });
});
