import { eventually } from '../support/eventually';
import { PrivateRedisCluster } from '../support/redis-cluster';
import type { TestGateway } from '../support/test-gateway';
import { servesThroughFailover, twoReplicasOn } from '../support/topology-checks';
import { waitForUsageSummary } from '../support/usage';

/**
 * A Redis Cluster master is killed (SIGKILL) in the middle of load from two replicas: requests keep being served,
 * and once its replica is promoted every request has exactly one usage record. Usage batches wait for a replica's
 * acknowledgement (WAIT), so a write the dead master acknowledged is not lost with it.
 */
describe('a Redis Cluster failover under load', () => {
  jest.setTimeout(180_000);
  const cluster = new PrivateRedisCluster();
  const replicas = twoReplicasOn(
    cluster,
    () => ({ cluster: { nodes: cluster.nodes }, commandTimeoutMs: 500 }),
    { auth: { onOutage: 'last-known' } },
  );

  const unreplicated = async (g: TestGateway) =>
    Number(
      /^switchyard_usage_unreplicated_batches_total (\d+)/m.exec(
        await (await fetch(`${g.url}/metrics`)).text(),
      )?.[1] ?? 0,
    );

  it('counts a usage batch no replica confirmed in time, and keeps it written', async () => {
    const [gw] = replicas();
    const team = 'frozen-replica';
    const { token } = await gw.teamToken(team);
    const replica = await cluster.replicaOf(await cluster.masterOf(`{${team}}`));
    const before = await unreplicated(gw);
    cluster.freeze(replica, true); // briefly: under the node timeout, so no failover starts
    try {
      await gw
        .openai(token)
        .chat.completions.create({ model: 'echo', messages: [{ role: 'user', content: 'one' }] });
      await eventually(async () => expect(await unreplicated(gw)).toBeGreaterThan(before), 5000, 50);
    } finally {
      cluster.freeze(replica, false);
    }
    await waitForUsageSummary(gw, `team=${team}`, 1, { timeoutMs: 5000, everyMs: 100 });
  });

  it('keeps answering through a master crash, with one record per request once its replica is promoted', async () => {
    await cluster.waitForReplicas();
    const team = 'failover';
    const master = await cluster.masterOf(`{${team}}`);
    await servesThroughFailover(replicas(), team, async () => {
      cluster.kill(master);
      await cluster.waitForPromotion(`{${team}}`, master);
    });
  });
});
