import { PrivateRedisCluster } from '../support/redis-cluster';
import { accountsEachTeamExactly, limitsAndRevocationHold, twoReplicasOn } from '../support/topology-checks';

/**
 * The gateway on a real Redis Cluster (three masters, three replicas, started by the test): accounting, limits
 * and revocation across two replicas hold as on one server, every script staying in its team's slot.
 */
describe('on a Redis Cluster', () => {
  jest.setTimeout(180_000);
  const cluster = new PrivateRedisCluster();
  const replicas = twoReplicasOn(cluster, () => ({ cluster: { nodes: cluster.nodes } }));

  it('accounts exactly for teams on different masters, with one record per request', async () => {
    const teams = ['north', 'south', 'east'];
    const masters = new Set(await Promise.all(teams.map((team) => cluster.masterOf(`{${team}}`))));
    expect(masters.size).toBeGreaterThan(1); // the teams really live on different masters
    await accountsEachTeamExactly(replicas(), teams);
  });

  it('limits hold across both replicas, and a revocation on one is refused on the other', async () => {
    await limitsAndRevocationHold(replicas());
  });
});
