import { OpenAIUpstream } from '../support/openai-upstream';
import { PrivateRedisCluster } from '../support/redis-cluster';
import { startTestGateway, type TestGateway } from '../support/test-gateway';
import { accountsEachTeamExactly, limitsAndRevocationHold } from '../support/topology-checks';

/**
 * The gateway on a real Redis Cluster (three masters, three replicas, started by the test): accounting, limits
 * and revocation across two replicas hold as on one server, every script staying in its team's slot.
 */
describe('on a Redis Cluster', () => {
  jest.setTimeout(180_000);
  const cluster = new PrivateRedisCluster();
  let upstream: OpenAIUpstream;
  let gateways: TestGateway[];

  beforeAll(async () => {
    await cluster.start();
    upstream = await new OpenAIUpstream().start();
    const config = { redis: { cluster: { nodes: cluster.nodes } } };
    const first = await startTestGateway({ upstreamUrl: upstream.url, config });
    gateways = [first, await startTestGateway({ upstreamUrl: upstream.url, config, prefix: first.prefix })];
  });
  afterAll(async () => {
    for (const g of gateways ?? []) await g.close();
    await upstream?.stop();
    await cluster.stop();
  });

  it('accounts exactly for teams on different masters, with one record per request', async () => {
    const teams = ['north', 'south', 'east'];
    const masters = new Set(await Promise.all(teams.map((team) => cluster.masterOf(`{${team}}`))));
    expect(masters.size).toBeGreaterThan(1); // the teams really live on different masters
    await accountsEachTeamExactly(gateways, teams);
  });

  it('limits hold across both replicas, and a revocation on one is refused on the other within 1 s', async () => {
    await limitsAndRevocationHold(gateways);
  });
});
