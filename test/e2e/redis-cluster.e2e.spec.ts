import { eventually } from '../support/eventually';
import { OpenAIUpstream } from '../support/openai-upstream';
import { PrivateRedisCluster } from '../support/redis-cluster';
import { startTestGateway, type TestGateway } from '../support/test-gateway';

/**
 * The gateway on a real Redis Cluster (three masters, three replicas, started by the test): accounting, limits
 * and revocation across two replicas hold as on one server, every script staying in its team's slot.
 */
describe('on a Redis Cluster', () => {
  jest.setTimeout(180_000);
  const cluster = new PrivateRedisCluster();
  let upstream: OpenAIUpstream;
  let gateways: TestGateway[];
  let gw: TestGateway;

  beforeAll(async () => {
    await cluster.start();
    upstream = await new OpenAIUpstream().start();
    const config = { redis: { cluster: { nodes: cluster.nodes } } };
    gw = await startTestGateway({ upstreamUrl: upstream.url, config });
    gateways = [gw, await startTestGateway({ upstreamUrl: upstream.url, config, prefix: gw.prefix })];
  });
  afterAll(async () => {
    for (const g of gateways ?? []) await g.close();
    await upstream?.stop();
    await cluster.stop();
  });

  const usageOf = async (team: string) => (await gw.admin('GET', `/admin/v1/usage?team=${team}`)).body.total;

  it('accounts exactly for teams on different slots, with one record per request', async () => {
    const teams = ['north', 'south', 'east'];
    const slots = new Set(await Promise.all(teams.map((team) => cluster.masterOf(`{${team}}`))));
    expect(slots.size).toBeGreaterThan(1); // the teams really live on different masters
    for (const team of teams) {
      const { token } = await gw.teamToken(team);
      for (let i = 0; i < 5; i++) {
        const client = gateways[i % 2].openai(token);
        await client.chat.completions.create({ model: 'echo', messages: [{ role: 'user', content: 'one two' }] });
      }
    }
    for (const team of teams) {
      const total = await eventually(async () => {
        const t = await usageOf(team);
        expect(t.requests).toBe(5);
        return t;
      }, 10_000);
      // "one two" is 2 prompt words; "echo: one two" 3 completion words, per the stand-in.
      expect(total).toMatchObject({ requests_ok: 5, prompt_tokens: 10, completion_tokens: 15 });
      const records = (await gw.admin('GET', `/admin/v1/usage/records?team=${team}&limit=50`)).body.data;
      expect(records).toHaveLength(5);
    }
  });

  it('limits hold across both replicas, and a revocation on one is refused on the other within 1 s', async () => {
    expect((await gw.admin('POST', '/admin/v1/teams', { id: 'limited', limits: { requestsPerMinute: 3 } })).status).toBe(201);
    const { token } = await gw.teamToken('limited');
    const statuses: number[] = [];
    for (let i = 0; i < 5; i++) {
      statuses.push(await gateways[i % 2].openai(token, { maxRetries: 0 }).chat.completions.create({ model: 'echo', messages: [{ role: 'user', content: 'x' }] }).then(() => 200, (e: { status: number }) => e.status));
    }
    expect(statuses).toEqual([200, 200, 200, 429, 429]);

    const { token: other, id: otherId } = await gw.teamToken('revoked-team');
    for (const g of gateways) await g.openai(other).chat.completions.create({ model: 'echo', messages: [{ role: 'user', content: 'cache me' }] });
    const revokedAt = Date.now();
    expect((await gateways[0].admin('DELETE', `/admin/v1/tokens/${otherId}`)).status).toBe(200);
    await eventually(async () => {
      const status = await gateways[1].openai(other, { maxRetries: 0 }).chat.completions.create({ model: 'echo', messages: [{ role: 'user', content: 'x' }] }).then(() => 200, (e: { status: number }) => e.status);
      expect(status).toBe(401);
    }, 1000, 20);
    expect(Date.now() - revokedAt).toBeLessThan(1000);
  });
});
