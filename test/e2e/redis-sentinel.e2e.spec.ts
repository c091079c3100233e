import { PrivateRedisSentinel } from '../support/redis-sentinel';
import { accountsEachTeamExactly, limitsAndRevocationHold, servesThroughFailover, twoReplicasOn } from '../support/topology-checks';

/**
 * The gateway on a Sentinel-managed Redis (a master, a replica, three sentinels, started by the test): the same
 * accounting, limits and revocation checks as on one server, then the master crashes under load and the
 * sentinels promote the replica.
 */
describe('on Redis Sentinel', () => {
  jest.setTimeout(180_000);
  const sentinel = new PrivateRedisSentinel();
  const replicas = twoReplicasOn(sentinel, () => ({ sentinel: { sentinels: sentinel.sentinels, name: sentinel.name }, commandTimeoutMs: 500 }), { auth: { onOutage: 'last-known' } });

  it('accounts exactly, with one record per request', async () => {
    await accountsEachTeamExactly(replicas(), ['north', 'south']);
  });

  it('limits hold across both replicas, and a revocation on one is refused on the other within 1 s', async () => {
    await limitsAndRevocationHold(replicas());
  });

  it('keeps answering through a master crash, with one record per request once the sentinels promote the replica', async () => {
    await servesThroughFailover(replicas(), 'failover', async () => {
      await sentinel.killMaster();
    });
  });
});
