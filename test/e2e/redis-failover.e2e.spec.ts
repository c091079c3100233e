import { eventually } from '../support/eventually';
import { OpenAIUpstream } from '../support/openai-upstream';
import { PrivateRedisCluster } from '../support/redis-cluster';
import { startTestGateway, type TestGateway } from '../support/test-gateway';
import { servesThroughFailover } from '../support/topology-checks';

/**
 * A Redis Cluster master is killed (SIGKILL) in the middle of load from two replicas: requests keep being served,
 * and once its replica is promoted every request has exactly one usage record. Usage batches wait for a replica's
 * acknowledgement (WAIT), so a write the dead master acknowledged is not lost with it.
 */
describe('a Redis Cluster failover under load', () => {
  jest.setTimeout(180_000);
  const cluster = new PrivateRedisCluster();
  let upstream: OpenAIUpstream;
  let gateways: TestGateway[];

  beforeAll(async () => {
    await cluster.start();
    upstream = await new OpenAIUpstream().start();
    const config = { redis: { cluster: { nodes: cluster.nodes }, commandTimeoutMs: 500 }, auth: { onOutage: 'last-known' } };
    const first = await startTestGateway({ upstreamUrl: upstream.url, config });
    gateways = [first, await startTestGateway({ upstreamUrl: upstream.url, config, prefix: first.prefix })];
  });
  afterAll(async () => {
    for (const g of gateways ?? []) await g.close();
    await upstream?.stop();
    await cluster.stop();
  });

  const unreplicated = async (g: TestGateway) => Number(/^switchyard_usage_unreplicated_batches_total (\d+)/m.exec(await (await fetch(`${g.url}/metrics`)).text())?.[1] ?? 0);

  it('counts a usage batch no replica confirmed in time, and keeps it written', async () => {
    const [gw] = gateways;
    const team = 'frozen-replica';
    const { token } = await gw.teamToken(team);
    const replica = await cluster.replicaOf(await cluster.masterOf(`{${team}}`));
    const before = await unreplicated(gw);
    cluster.freeze(replica, true); // briefly: under the node timeout, so no failover starts
    try {
      await gw.openai(token).chat.completions.create({ model: 'echo', messages: [{ role: 'user', content: 'one' }] });
      await eventually(async () => expect(await unreplicated(gw)).toBeGreaterThan(before), 5000, 50);
    } finally {
      cluster.freeze(replica, false);
    }
    await eventually(async () => expect((await gw.admin('GET', `/admin/v1/usage?team=${team}`)).body.total?.requests).toBe(1), 5000, 100);
  });

  it('keeps answering through a master crash, with one record per request once its replica is promoted', async () => {
    await cluster.waitForReplicas();
    const team = 'failover';
    const master = await cluster.masterOf(`{${team}}`);
    await servesThroughFailover(gateways, team, async () => {
      cluster.kill(master);
      await cluster.waitForPromotion(`{${team}}`, master);
    });
  });
});
