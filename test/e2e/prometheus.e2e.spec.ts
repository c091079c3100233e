import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { parse, stringify } from 'yaml';
import { eventually } from '../support/eventually';
import { freePort } from '../support/free-port';
import { RemoteMcpServer } from '../support/mcp-remote-server';
import { OpenAIUpstream } from '../support/openai-upstream';
import { ensurePrometheus, PrometheusServer } from '../support/prometheus';
import { startTestGateway, type TestGateway } from '../support/test-gateway';

const root = join(__dirname, '../..');
const METRICS_TOKEN = 'test-metrics-token';
const MCP_SERVER_TOKEN = 'mcp-server-credential';

/**
 * A real Prometheus (Debian's package) scrapes a real gateway with the shipped scrape config;
 * every query of the shipped Grafana dashboard must return data, and the token totals must
 * equal the usage API's.
 */
describe('Prometheus scraping the gateway, and the shipped dashboard', () => {
  jest.setTimeout(120_000);
  let upstream: OpenAIUpstream;
  let gw: TestGateway;
  let mcpServer: RemoteMcpServer;
  const prometheus = new PrometheusServer();

  beforeAll(async () => {
    const binary = ensurePrometheus();
    mcpServer = await new RemoteMcpServer({ token: MCP_SERVER_TOKEN }).start();
    const downPort = await freePort();
    upstream = await new OpenAIUpstream().start();
    upstream.delayMs = 20;
    gw = await startTestGateway({
      upstreamUrl: upstream.url,
      // `echo` has a price (spend panels); `slow` has none (the unknown-price panel); `cached` reads 800 prompt
      // tokens from OpenAI's prompt cache per request (the prompt cache panels).
      config: {
        server: { metricsToken: METRICS_TOKEN },
        metrics: { quotaCacheMs: 0 },
        // A tool server to call and one that is down (the MCP panels).
        mcp: {
          servers: {
            tools: { url: mcpServer.url, headers: { Authorization: `Bearer ${MCP_SERVER_TOKEN}` } },
            gone: { url: `http://127.0.0.1:${downPort}/mcp`, timeoutMs: 2000 },
          },
        },
        models: {
          echo: { backend: 'standin', upstreamModel: 'echo', price: { input: 2, output: 8 } },
          cached: {
            backend: 'standin',
            upstreamModel: 'cached-800-0-0',
            price: { input: 2, cachedInput: 0.5, output: 8 },
          },
          // Answers a repeated request from the response cache (its panel).
          remembered: {
            backend: 'standin',
            upstreamModel: 'echo',
            price: { input: 2, output: 8 },
            responseCache: { ttlSeconds: 600 },
          },
        },
      },
    });
    // The shipped scrape config, with only the target and the token file's path swapped for this machine.
    const config = parse(readFileSync(join(root, 'deploy/prometheus/prometheus.yml'), 'utf8'));
    const tokenFile = join(mkdtempSync(join(tmpdir(), 'switchyard-metrics-token-')), 'token');
    writeFileSync(tokenFile, METRICS_TOKEN);
    config.global.scrape_interval = '1s';
    config.scrape_configs[0].authorization.credentials_file = tokenFile;
    config.scrape_configs[0].static_configs[0].targets = [new URL(gw.url).host];
    await prometheus.start(binary, stringify(config));
    // Prometheus applies new scrape targets on a 5 s tick: wait for the first scrape before any traffic.
    await eventually(
      async () => expect(await prometheus.query('up{job="switchyard"} == 1')).toHaveLength(1),
      20_000,
      200,
    );
  });
  afterAll(async () => {
    await prometheus.stop();
    await gw?.close();
    await upstream?.stop();
    await mcpServer?.stop();
  });

  it('/metrics needs the metrics token when one is configured', async () => {
    expect((await fetch(`${gw.url}/metrics`)).status).toBe(401);
    expect((await fetch(`${gw.url}/metrics`, { headers: { authorization: 'Bearer wrong' } })).status).toBe(
      401,
    );
    const ok = await fetch(`${gw.url}/metrics`, { headers: { authorization: `Bearer ${METRICS_TOKEN}` } });
    expect(ok.status).toBe(200);
    expect(ok.headers.get('content-type')).toContain('text/plain');
  });

  it('every dashboard query returns data after traffic, and token totals equal the usage API', async () => {
    const teams = ['alpha', 'beta'];
    const tokens: Record<string, string> = {};
    for (const team of teams) {
      await gw.admin('POST', '/admin/v1/teams', {
        id: team,
        limits: { requestsPerMinute: 1000, tokensPerDay: 100_000 },
        mcp: { servers: ['tools', 'gone'], tools: ['*'] },
      });
      await gw.admin('POST', '/admin/v1/teams', { id: `${team}-budgeted`, limits: { budgetPerDay: 1 } });
      tokens[`${team}-budgeted`] = (
        await gw.admin('POST', `/admin/v1/teams/${team}-budgeted/tokens`, {})
      ).body.token;
      tokens[team] = (await gw.admin('POST', `/admin/v1/teams/${team}/tokens`, {})).body.token;
    }
    // Traffic over a few scrape intervals: plain and streamed calls, upstream failures, a limit refusal.
    for (let round = 0; round < 4; round++) {
      for (const team of teams) {
        const client = gw.openai(tokens[team]);
        await client.chat.completions.create({
          model: 'echo',
          messages: [{ role: 'user', content: `round ${round} for ${team}` }],
        });
        const stream = await client.chat.completions.create({
          model: 'slow',
          stream: true,
          messages: [{ role: 'user', content: 'a b c' }],
        });
        for await (const _ of stream) void _;
        await client.chat.completions
          .create({ model: 'status-500', messages: [{ role: 'user', content: 'x' }] })
          .catch(() => undefined);
        await client.chat.completions.create({
          model: 'cached',
          messages: [{ role: 'user', content: `cached round ${round}` }],
        });
      }
      await gw
        .openai(tokens.alpha)
        .chat.completions.create({
          model: 'echo',
          max_tokens: 1_000_000,
          messages: [{ role: 'user', content: 'x' }],
        })
        .catch(() => undefined);
      for (const team of teams) {
        const budgeted = gw.openai(tokens[`${team}-budgeted`]);
        await budgeted.chat.completions.create({
          model: 'echo',
          max_tokens: 20,
          messages: [{ role: 'user', content: `spend ${round}` }],
        });
        // A miss, then a hit of the same request (in the teams with no token limit: a hit's tokens are in the usage
        // API but not in token limits, which the quota check below compares).
        for (let i = 0; i < 2; i++)
          await budgeted.chat.completions.create({
            model: 'remembered',
            messages: [{ role: 'user', content: `remembered round ${round}` }],
          });
      }
      // A tool call through /mcp, and one to the server that is down.
      for (const team of teams) {
        const client = new Client({ name: 'prometheus-e2e', version: '1.0.0' });
        await client.connect(
          new StreamableHTTPClientTransport(new URL(`${gw.url}/mcp`), {
            requestInit: { headers: { authorization: `Bearer ${tokens[team]}` } },
          }),
        );
        await client.callTool({ name: 'tools__echo', arguments: { text: `round ${round}` } });
        await client.callTool({ name: 'gone__echo', arguments: {} }).catch(() => undefined);
        await client.close();
      }
      // Each round in a scrape of its own, so rate() and increase() have several samples to work with.
      await prometheus.scrapedAfter(Date.now());
    }

    // Prometheus has scraped the final numbers when its token totals match the usage API's.
    const usage = Object.fromEntries(
      await Promise.all(
        [...teams, 'alpha-budgeted', 'beta-budgeted'].map(
          async (team) =>
            [team, (await gw.admin('GET', `/admin/v1/usage?team=${team}`)).body.total.total_tokens] as const,
        ),
      ),
    );
    expect(usage.alpha).toBeGreaterThan(0);
    await eventually(
      async () => {
        const rows = await prometheus.query(
          'sum by (team) (switchyard_tokens_total{type=~"prompt|completion"})',
        );
        const scraped = Object.fromEntries(rows.map((row) => [row.metric.team, Number(row.value[1])]));
        expect(scraped).toEqual(usage);
      },
      15_000,
      250,
    );
    expect(await prometheus.targetsHealth()).toEqual(['up']);

    // rate() needs two samples of a series: one more scrape after the one that had the final numbers.
    await prometheus.scrapedAfter(Date.now());
    const dashboard = JSON.parse(
      readFileSync(join(root, 'deploy/grafana/dashboards/switchyard.json'), 'utf8'),
    );
    const grafanaVariables = (expr: string) =>
      expr.replaceAll('$__rate_interval', '1m').replaceAll('$__range', '5m').replaceAll('$team', '.*');
    const empty: string[] = [];
    for (const panel of dashboard.panels) {
      for (const target of panel.targets) {
        const result = await prometheus.query(grafanaVariables(target.expr));
        if (result.length === 0) empty.push(`${panel.title}: ${target.expr}`);
      }
    }
    expect(empty).toEqual([]);

    // Spot-check what some panels say.
    const quota = await prometheus.query(
      'max by (team, limit) (switchyard_quota_remaining{team="beta", limit="tokensPerDay"})',
    );
    expect(Number(quota[0].value[1])).toBe(100_000 - usage.beta);
    const rejections = await prometheus.query(
      'sum(switchyard_limit_rejections_total{team="alpha", limit="tokensPerDay"})',
    );
    expect(Number(rejections[0].value[1])).toBe(4);
    const upstreamErrors = await prometheus.query(
      'sum(switchyard_upstream_errors_total{backend="standin", reason="upstream_error"})',
    );
    expect(Number(upstreamErrors[0].value[1])).toBe(8);

    // The spend panels say what the usage API says (Prometheus holds the currency's unit, the API nano-units too).
    for (const team of [...teams, 'alpha-budgeted', 'beta-budgeted']) {
      const total = (await gw.admin('GET', `/admin/v1/usage?team=${team}`)).body.total;
      const [spend] = await prometheus.query(`sum(switchyard_cost_total{team="${team}"})`);
      expect(Number(spend.value[1])).toBeCloseTo(total.cost_nanos / 1e9, 9);
      expect(total.cost_nanos).toBeGreaterThan(0);
      const unknown = await prometheus.query(`sum(switchyard_cost_unknown_total{team="${team}"})`);
      expect(Number(unknown[0]?.value[1] ?? 0)).toBe(total.cost_unknown_requests);
    }
    // The prompt cache panels: 800 of each cached request's prompt tokens were reads, each saving 1.5 per million
    // (2 at the input price, 0.5 at the read price), over the 8 cached requests.
    const cacheUsage = (await gw.admin('GET', '/admin/v1/usage?model=cached')).body.total;
    const [share] = await prometheus.query(
      'sum(switchyard_tokens_total{model="cached", type="cache_read"}) / sum(switchyard_tokens_total{model="cached", type="prompt"})',
    );
    expect(Number(share.value[1])).toBeCloseTo((8 * 800) / cacheUsage.prompt_tokens, 9);
    const [saved] = await prometheus.query(
      'sum(switchyard_cost_without_cache_total{model="cached"}) - sum(switchyard_cost_total{model="cached"})',
    );
    expect(Number(saved.value[1])).toBeCloseTo((8 * 800 * 1.5) / 1e6, 9);
    // The response cache panel: one hit for each miss (8 of each).
    const lookups = await prometheus.query(
      'sum by (result) (switchyard_response_cache_total{model="remembered", result=~"hit|miss"})',
    );
    expect(Object.fromEntries(lookups.map((row) => [row.metric.result, Number(row.value[1])]))).toEqual({
      hit: 8,
      miss: 8,
    });
    const budget = (await gw.admin('GET', '/admin/v1/teams/alpha-budgeted/budget')).body.budgets[0];
    const [used] = await prometheus.query(
      'max by (team, budget) (switchyard_budget_used_ratio{team="alpha-budgeted"})',
    );
    expect(Number(used.value[1])).toBeCloseTo(budget.used_ratio, 9);
  });
});
